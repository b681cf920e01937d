import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * PGlite on a thread of its own: its open (Postgres's start-up in WebAssembly, hundreds of ms of
 * CPU) runs beside the start on another core, and later queries never stall the event loop that
 * serves HTTP. The thread answers open, a statement, a transaction of statements, and close,
 * one at a time in the order they came, as PGlite does in process.
 */
export interface PgliteThread {
  /**
   * Opens the database; resolves when it is open, rejects with the reason it could not open.
   * Once per thread; statements sent before it finishes wait for it.
   */
  open(options?: PgliteOpenOptions): Promise<void>;
  query<Row extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<Row[]>;
  /** Runs `statements` in one transaction: all of them commit, or none does. */
  transaction(statements: string[]): Promise<void>;
  /** Closes the database (Postgres's shutdown checkpoint) and ends the thread. */
  close(): Promise<void>;
}

export interface PgliteOpenOptions {
  /** Folder holding the database files; absent: in memory, gone at close. */
  dataDir?: string;
  /** Postgres settings for the open (`-c name=value` pairs, after PGlite's own defaults). */
  settings?: Record<string, string>;
}

type Request =
  | { id: number; op: 'open'; dataDir: string | undefined; startParams: string[] }
  | { id: number; op: 'query'; text: string; values: unknown[] }
  | { id: number; op: 'transaction'; statements: string[] }
  | { id: number; op: 'close' };

type Reply = { id: number; ok: true; rows?: unknown } | { id: number; ok: false; error: WireError };

/** An error as it crosses the thread: its message, name and every field Postgres set (code…). */
interface WireError {
  message: string;
  name: string;
  stack?: string;
  fields: Record<string, unknown>;
}

/**
 * The thread's code, CommonJS evaluated in the worker, so it needs no file of its own beside the
 * bundles: it loads PGlite from the path the main thread resolved. From its start, before any
 * open, it compiles PGlite's WebAssembly and reads its file-system bundle (both beside PGlite's
 * modules), so a thread started early has them ready when the folder to open is known. Should
 * either be missing, PGlite finds its own at the open.
 */
const threadSource = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const packageDist = dirname(workerData.pglitePath);
// Before PGlite's modules load: the reads are synchronous (this thread has nothing else to do)
// and the compile goes on on V8's own threads while PGlite's modules load.
const read = (name) => {
  try {
    return readFileSync(join(packageDist, name));
  } catch {
    return null;
  }
};
const wasmBytes = read('pglite.wasm');
const compiled = wasmBytes === null ? Promise.resolve(undefined) : WebAssembly.compile(wasmBytes);
const bundleBytes = read('pglite.data');
// PGlite asks its fsBundle for arrayBuffer(): a Blob would copy the bytes back out chunk by
// chunk, slower than reading the file; this hands over the buffer read.
const fsBundle =
  bundleBytes === null
    ? undefined
    : {
        arrayBuffer: async () =>
          bundleBytes.byteOffset === 0 && bundleBytes.byteLength === bundleBytes.buffer.byteLength
            ? bundleBytes.buffer
            : bundleBytes.buffer.slice(bundleBytes.byteOffset, bundleBytes.byteOffset + bundleBytes.byteLength),
      };
const { PGlite } = require(workerData.pglitePath);
const ahead = compiled.then(
  (pgliteWasmModule) => ({
    ...(pgliteWasmModule ? { pgliteWasmModule } : {}),
    ...(fsBundle ? { fsBundle } : {}),
  }),
  () => ({}),
);
const toWire = (error) => {
  const fields = {};
  if (error && typeof error === 'object') {
    for (const [key, value] of Object.entries(error)) {
      if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
    }
  }
  return {
    message: error instanceof Error ? error.message : String(error),
    name: error instanceof Error ? error.name : 'Error',
    stack: error instanceof Error ? error.stack : undefined,
    fields,
  };
};
let database = null;
let opened = Promise.reject(new Error('the PGlite thread has no database open'));
opened.catch(() => {});
const run = async (request) => {
  if (request.op === 'open') {
    opened = ahead.then(async (artifacts) => {
      // memory:// rather than no folder: PGlite applies the start parameters to either then.
      database = new PGlite(request.dataDir ?? 'memory://', {
        ...artifacts,
        startParams: [...PGlite.defaultStartParams, ...request.startParams],
      });
      await database.waitReady;
    });
    await opened;
    return undefined;
  }
  await opened;
  if (request.op === 'query') return (await database.query(request.text, request.values)).rows;
  if (request.op === 'transaction') {
    await database.transaction(async (tx) => {
      for (const statement of request.statements) await tx.exec(statement);
    });
    return undefined;
  }
  if (request.op === 'close') {
    await database.close();
    return undefined;
  }
  throw new Error('unknown request ' + request.op);
};
parentPort.on('message', (request) => {
  run(request).then(
    (rows) => parentPort.postMessage({ id: request.id, ok: true, rows }),
    (error) => parentPort.postMessage({ id: request.id, ok: false, error: toWire(error) }),
  );
});
`;

function fromWire(wire: WireError): Error {
  const error = new Error(wire.message);
  error.name = wire.name;
  if (wire.stack) error.stack = wire.stack;
  return Object.assign(error, wire.fields);
}

/**
 * Starts the thread, which loads PGlite and prepares its WebAssembly at once; open() names the
 * folder. A process that knows it will open PGlite starts this first and the rest beside it.
 */
export function startPgliteThread(): PgliteThread {
  const worker = new Worker(threadSource, {
    eval: true,
    workerData: { pglitePath: createRequire(import.meta.url).resolve('@electric-sql/pglite') },
    // The database's own name in a thread list or a profile.
    name: 'pglite',
  });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  let ended: Error | null = null;
  // The thread keeps the process alive only while an answer is awaited, as a socket does.
  worker.unref();

  const settle = (reply: Reply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    if (reply.ok) waiter.resolve(reply.rows);
    else waiter.reject(fromWire(reply.error));
  };
  const endAll = (error: Error) => {
    ended = error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on('message', settle);
  worker.on('error', (error) => endAll(error));
  worker.on('exit', (code) =>
    endAll(new Error(`the PGlite thread ended (exit code ${code}); the database is closed`)),
  );

  const waitFor = (id: number) =>
    new Promise<unknown>((resolve, reject) => {
      if (ended) {
        reject(ended);
        return;
      }
      pending.set(id, { resolve, reject });
      worker.ref();
    });
  const send = (request: Request) => {
    const answer = waitFor(request.id);
    if (!ended) worker.postMessage(request);
    return answer;
  };

  return {
    async open(options: PgliteOpenOptions = {}) {
      const startParams = Object.entries(options.settings ?? {}).flatMap(([name, value]) => [
        '-c',
        `${name}=${value}`,
      ]);
      await send({ id: nextId++, op: 'open', dataDir: options.dataDir, startParams });
    },
    async query<Row extends Record<string, unknown>>(text: string, values: unknown[] = []) {
      return (await send({ id: nextId++, op: 'query', text, values })) as Row[];
    },
    async transaction(statements: string[]) {
      await send({ id: nextId++, op: 'transaction', statements });
    },
    async close() {
      if (ended) return;
      // A thread that never opened has nothing to close: ending it is enough.
      await send({ id: nextId++, op: 'close' }).catch(() => {});
      await worker.terminate();
    },
  };
}
