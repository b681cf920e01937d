/**
 * Node-side CPU of the store's append path, without a database: the real store
 * (createPostgresStore, its validation, group commit, metrics and the pg driver's encoding and
 * decoding) over a stub socket that speaks the Postgres wire protocol and answers every
 * statement at once with rows shaped like the append functions' (chunklog_append's full chunk
 * rows, the batch functions' id, seq and created_at_ms). 32 appenders on 32 tabs append one
 * chunk at a time, as `store.append.of_limit.c32` does, so the group commit forms its batches
 * as under load.
 *
 *   npx tsx bench/append-cpu-probe.ts [appends]    appends (default 12000), wall time per append
 *   npx tsx bench/append-cpu-probe.ts callgrind    instructions per append under valgrind's
 *     callgrind (load-independent): the probe bundled with esbuild, run on a single-threaded
 *     node (Node.js 24 where `.ci/run` caches it, as the benches run) with 12,000 and with 2,000
 *     appends, the difference divided by 10,000 (start-up and warm-up cancel out); repeated runs
 *     agree within about 2%
 *   npx tsx bench/append-cpu-probe.ts callgrind traced    the same with tracing on: every append
 *     a span, exported over OTLP (protobuf, the batch processor) to a receiver in a process of
 *     its own (not counted), as `trace.store.overhead_ratio` measures it
 *
 * For attribution, run the bundle it leaves in the system temp folder with `node --cpu-prof`
 * or `--trace-gc`. The counts include the probe's own chunk making and the stub's answers.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { startTracing } from '@chunklog/runtime';
import { createPostgresStore } from '@chunklog/store';
import pg from 'pg';
import { Registry } from 'prom-client';
import { startOtlpReceiverProcess } from './otlp-receiver-process';
import { supportedNode } from './supported-node';

const appenders = 32;

const textChunk = (tabId: string) => ({
  id: randomUUID(),
  tabId,
  turnId: randomUUID(),
  step: 0,
  role: 'user' as const,
  type: 'text' as const,
  data: { text: 'hello' },
});

/** Ids of the chunks appended and not yet answered, in call order (the stub answers in it). */
const unanswered: string[] = [];
let nextSeq = 1;

const int16 = (value: number) => Buffer.from([value >> 8, value & 255]);
const int32 = (value: number) => {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
};
const message = (type: string, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from(type), int32(body.length + 4), body]);
};
const cstring = (text: string) => Buffer.from(`${text}\0`);

const oid = { uuid: 2950, int8: 20, int4: 23, text: 25, jsonb: 3802, float8: 701 };
const rowDescription = (columns: Array<[string, number]>) =>
  message(
    'T',
    int16(columns.length),
    ...columns.map(([name, type]) =>
      Buffer.concat([
        cstring(name),
        int32(0),
        int16(0),
        int32(type),
        int16(-1),
        int32(-1),
        int16(0),
      ]),
    ),
  );
/** A data row of text values (ASCII, as every value the stub sends is), in one buffer. */
function dataRow(values: string[]): Buffer {
  let length = 4 + 2;
  for (const value of values) length += 4 + value.length;
  const row = Buffer.allocUnsafe(1 + length);
  row[0] = 0x44; // 'D'
  row.writeInt32BE(length, 1);
  row.writeInt16BE(values.length, 5);
  let at = 7;
  for (const value of values) {
    row.writeInt32BE(value.length, at);
    at += 4 + row.write(value, at + 4, 'latin1');
  }
  return row;
}

const singleColumns = rowDescription([
  ['id', oid.uuid],
  ['seq', oid.int8],
  ['turn_id', oid.uuid],
  ['step', oid.int4],
  ['role', oid.text],
  ['type', oid.text],
  ['data', oid.jsonb],
  ['created_at_ms', oid.float8],
]);
const batchColumns = rowDescription([
  ['id', oid.uuid],
  ['seq', oid.int8],
  ['created_at_ms', oid.float8],
]);
const createdAt = String(Date.now());
const turnId = randomUUID();

/** A socket whose far end is a Postgres that has every tab and stores every chunk. */
class StubPostgres extends Duplex {
  private input: Buffer = Buffer.alloc(0);
  private started = false;
  private output: Buffer[] = [];
  private statement = '';
  private items = 0;

  setNoDelay() {
    return this;
  }
  setKeepAlive() {
    return this;
  }
  ref() {}
  unref() {}
  connect() {
    setImmediate(() => this.emit('connect'));
    return this;
  }
  override _read() {}
  override _write(chunk: Buffer, _encoding: string, done: () => void) {
    this.input = this.input.length === 0 ? chunk : Buffer.concat([this.input, chunk]);
    this.consume();
    if (this.output.length > 0) {
      const reply = Buffer.concat(this.output);
      this.output = [];
      setImmediate(() => this.push(reply));
    }
    done();
  }

  private consume() {
    if (!this.started) {
      if (this.input.length < 4) return;
      this.input = this.input.subarray(this.input.readInt32BE(0));
      this.started = true;
      this.output.push(message('R', int32(0)), message('Z', Buffer.from('I')));
    }
    while (this.input.length >= 5) {
      const length = this.input.readInt32BE(1);
      if (this.input.length < length + 1) return;
      const body = this.input.subarray(5, length + 1);
      this.answer(String.fromCharCode(this.input[0]!), body);
      this.input = this.input.subarray(length + 1);
    }
  }

  private answer(type: string, body: Buffer) {
    switch (type) {
      case 'P':
        this.output.push(message('1'));
        break;
      case 'B': {
        // Portal and statement names, parameter formats, then the first parameter (tab ids).
        let at = body.indexOf(0) + 1;
        const end = body.indexOf(0, at);
        this.statement = body.toString('latin1', at, end);
        at = end + 1;
        at += 2 + 2 * body.readInt16BE(at) + 2;
        const first = body.toString('latin1', at + 4, at + 4 + body.readInt32BE(at));
        this.items = first.startsWith('{') ? first.split(',').length : 1;
        this.output.push(message('2'));
        break;
      }
      case 'D':
        this.output.push(this.statement === 'chunklog_append' ? singleColumns : batchColumns);
        break;
      case 'E':
        for (let item = 0; item < this.items; item += 1) {
          const id = unanswered.shift()!;
          const seq = String(nextSeq++);
          this.output.push(
            this.statement === 'chunklog_append'
              ? dataRow([id, seq, turnId, '0', 'user', 'text', '{"text": "hello"}', createdAt])
              : dataRow([id, seq, createdAt]),
          );
        }
        this.output.push(message('C', cstring(`SELECT ${this.items}`)));
        break;
      case 'S':
        this.output.push(message('Z', Buffer.from('I')));
        break;
      case 'X':
        this.push(null);
        break;
      default:
        throw new Error(`stub Postgres: unexpected message ${type}`);
    }
  }
}

async function run(appends: number): Promise<void> {
  // Traced when the caller names an OTLP endpoint (the callgrind mode's `traced`).
  const tracing = await startTracing({ serviceName: 'append-cpu-probe' });
  const pool = new pg.Pool({ max: appenders, stream: () => new StubPostgres() } as pg.PoolConfig);
  const metricsRegistry = new Registry();
  const store = createPostgresStore({ pool, metricsRegistry });
  const tabs = Array.from({ length: appenders }, () => randomUUID());
  let left = appends;
  const started = performance.now();
  await Promise.all(
    tabs.map(async (tabId) => {
      while (left > 0) {
        left -= 1;
        const chunk = textChunk(tabId);
        unanswered.push(chunk.id);
        const [stored] = await store.append(tabId, [chunk]);
        if (stored?.id !== chunk.id) throw new Error('stub Postgres answered out of order');
      }
    }),
  );
  const elapsed = performance.now() - started;
  const batches = await metricsRegistry.getSingleMetricAsString('chunklog_store_append_batch_size');
  const count = Number(/_count (\d+)/.exec(batches)?.[1]);
  console.log(
    `${appends} appends in ${count} batches, ${((elapsed * 1000) / appends).toFixed(2)} µs each`,
  );
  await store.close();
  await pool.end();
  await tracing.shutdown();
}

/** Instructions per append: two runs under callgrind, the difference over the extra appends. */
async function callgrind(traced: boolean): Promise<void> {
  const receiver = traced ? await startOtlpReceiverProcess() : null;
  const env = { ...process.env };
  delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (receiver) env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  const bundle = join(tmpdir(), 'append-cpu-probe.mjs');
  execFileSync('npx', [
    'esbuild',
    fileURLToPath(import.meta.url),
    '--bundle',
    '--platform=node',
    '--format=esm',
    `--outfile=${bundle}`,
    '--log-level=error',
    "--banner:js=import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  ]);
  const instructions = (appends: number) => {
    const result = spawnSync(
      'valgrind',
      [
        '--tool=callgrind',
        '--callgrind-out-file=/dev/null',
        supportedNode(),
        // No compiler or GC helper threads: their share of the work varies from run to run.
        '--single-threaded',
        bundle,
        String(appends),
      ],
      { encoding: 'utf8', env },
    );
    const collected = /Collected : (\d+)/.exec(result.stderr);
    if (collected === null) throw new Error(`callgrind failed:\n${result.stderr}`);
    return Number(collected[1]);
  };
  const [high, low] = [12_000, 2_000];
  try {
    const perAppend = (instructions(high) - instructions(low)) / (high - low);
    const how = traced ? ', traced' : '';
    console.log(`${Math.round(perAppend)} instructions per append${how} (${bundle})`);
    if (receiver) console.log(`spans received: ${await receiver.count()}`);
  } finally {
    await receiver?.close();
  }
}

const mode = process.argv[2];
if (mode === 'callgrind') await callgrind(process.argv[3] === 'traced');
else await run(Number(mode ?? 12_000));
