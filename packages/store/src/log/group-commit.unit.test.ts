import { type Chunk, ConflictError, type NewChunk, NotFoundError } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import type { SqlClient } from '../sql-client';
import { type AppendRequest, createGroupCommit } from './group-commit';

interface Call {
  name: string | undefined;
  values: unknown[];
  resolve(rows: Record<string, unknown>[]): void;
  reject(error: unknown): void;
}

/** A SqlClient whose statements wait until the test answers them, in the order they came. */
function scriptedClient() {
  const calls: Call[] = [];
  const client: SqlClient = {
    query<Row extends Record<string, unknown>>(_text: string, values?: unknown[], name?: string) {
      return new Promise<Row[]>((resolve, reject) => {
        calls.push({
          name,
          values: values ?? [],
          resolve: resolve as (rows: Record<string, unknown>[]) => void,
          reject,
        });
      });
    },
  };
  /** The next statement sent, once it has been. */
  async function next(): Promise<Call> {
    for (let turn = 0; turn < 100 && calls.length === 0; turn += 1) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const call = calls.shift();
    if (call === undefined) throw new Error('no statement was sent');
    return call;
  }
  return { client, next, pending: () => calls.length };
}

const metrics = { batch() {}, batchDuration() {}, queueWait() {} };
const limits = { maxItems: 64, maxChunks: 1000, maxBytes: 1 << 22 };

function request(tabId: string, id: string): AppendRequest {
  const chunk = { id, tabId, turnId: 't', step: 0, role: 'user', type: 'text', data: {} } as const;
  return {
    tabId,
    chunks: [chunk as unknown as NewChunk],
    chunksJson: JSON.stringify([chunk]),
    chunkIds: [id],
    expectedSeq: null,
  };
}

function row(id: string, seq: number, extra: Record<string, unknown> = {}) {
  return {
    id,
    seq: String(seq),
    turn_id: 't',
    step: 0,
    role: 'user',
    type: 'text',
    data: {},
    created_at_ms: 1,
    ...extra,
  };
}

/** A batch's answer row for a chunk it stored. */
function batchRow(id: string, seq: number) {
  return { id, seq: String(seq), created_at_ms: 1 };
}

/** Starts a lone append (which takes the lane) and returns it with its statement. */
async function occupyLane(
  harness: ReturnType<typeof scriptedClient>,
  commit: ReturnType<typeof createGroupCommit>,
) {
  const lone = commit.append(request('busy', 'lone'));
  const call = await harness.next();
  expect(call.name).toBe('chunklog_append');
  return { lone, call };
}

/**
 * A group commit with one lane, busy with a lone append while `requests` queue behind it; the
 * lone append is then answered, and the statement the queued ones went out in is returned.
 */
async function queuedBehindLone(requests: AppendRequest[]) {
  const harness = scriptedClient();
  const commit = createGroupCommit(harness.client, { lanes: 1, limits, metrics });
  const { call } = await occupyLane(harness, commit);
  const appends = requests.map((next) => commit.append(next));
  call.resolve([row('lone', 1)]);
  return { harness, commit, appends, batch: await harness.next() };
}

describe('group commit', () => {
  it('runs a lone append at once as the single statement', async () => {
    const harness = scriptedClient();
    const commit = createGroupCommit(harness.client, { lanes: 1, limits, metrics });
    const { lone, call } = await occupyLane(harness, commit);
    expect(call.values).toEqual(['busy', request('busy', 'lone').chunksJson, null]);
    call.resolve([row('lone', 1)]);
    expect((await lone).map((chunk) => chunk.seq)).toEqual([1]);
    await commit.idle();
  });

  it('sends the appends that queued behind a busy lane as one batch, in call order', async () => {
    const { harness, appends, batch } = await queuedBehindLone([
      request('a', 'a1'),
      request('b', 'b1'),
      request('a', 'a2'),
    ]);
    expect(batch.name).toBe('chunklog_append_batch');
    expect(batch.values[0]).toBe('{a,b,a}');
    batch.resolve([batchRow('a1', 1), batchRow('b1', 1), batchRow('a2', 2)]);
    expect((await Promise.all(appends)).map((chunks) => chunks[0]!.id)).toEqual(['a1', 'b1', 'a2']);
    expect(harness.pending()).toBe(0);
  });

  it('lets the callers a batch answered append again together, not the first alone', async () => {
    const { harness, commit, appends, batch } = await queuedBehindLone([
      request('a', 'a1'),
      request('b', 'b1'),
    ]);
    const [first, second] = appends as [Promise<unknown>, Promise<unknown>];
    // As callers do: some work between the answer and the next append, so the lane is free
    // again by the time they call.
    const later = async (answered: Promise<unknown>, next: AppendRequest) => {
      await answered;
      for (let hop = 0; hop < 10; hop += 1) await Promise.resolve();
      return commit.append(next);
    };
    const again = Promise.all([
      later(first, request('a', 'a2')),
      later(second, request('b', 'b2')),
    ]);
    batch.resolve([batchRow('a1', 1), batchRow('b1', 1)]);
    const next = await harness.next();
    expect(next.name).toBe('chunklog_append_batch_distinct');
    expect(next.values[0]).toBe('{a,b}');
    next.resolve([batchRow('a2', 2), batchRow('b2', 2)]);
    expect((await again).map((chunks) => chunks[0]!.seq)).toEqual([2, 2]);
    await commit.idle();
  });

  it('sends one-chunk appends of distinct tabs through the plainer statement', async () => {
    const { appends, batch } = await queuedBehindLone([request('a', 'a1'), request('b', 'b1')]);
    expect(batch.name).toBe('chunklog_append_batch_distinct');
    // Each chunk alone, not in an array of its append's chunks.
    expect(JSON.parse(String(batch.values[1])).map((chunk: { id: string }) => chunk.id)).toEqual([
      'a1',
      'b1',
    ]);
    batch.resolve([batchRow('b1', 9), batchRow('a1', 3)]);
    expect((await Promise.all(appends)).map((chunks) => chunks[0]!.seq)).toEqual([3, 9]);
  });

  it('makes the appends a batch left out one by one after it, each with its own answer', async () => {
    const { harness, appends, batch } = await queuedBehindLone([
      request('a', 'a1'),
      request('b', 'b1'),
      request('c', 'c1'),
    ]);
    const [good, fenced, replay] = appends as [
      Promise<Chunk[]>,
      Promise<Chunk[]>,
      Promise<Chunk[]>,
    ];
    // Caught at once: the fenced append fails while the test is still answering statements.
    const fencedError = fenced.catch((error: unknown) => error);
    // Nothing came back for b and c: the batch left them out.
    batch.resolve([batchRow('a1', 4)]);
    expect((await good)[0]!.seq).toBe(4);
    const fencedCall = await harness.next();
    expect(fencedCall.values[0]).toBe('b');
    fencedCall.reject(Object.assign(new Error('expected seq 2 but ...'), { code: 'CL409' }));
    const replayCall = await harness.next();
    expect(replayCall.values[0]).toBe('c');
    replayCall.resolve([row('c1', 7)]);
    expect(await fencedError).toBeInstanceOf(ConflictError);
    expect((await replay)[0]!.seq).toBe(7);
  });

  it('makes a batch the database refused one by one, so only the culprit fails', async () => {
    const { harness, appends, batch } = await queuedBehindLone([
      request('a', 'a1'),
      request('b', 'b1'),
    ]);
    const [first, second] = appends as [Promise<Chunk[]>, Promise<Chunk[]>];
    batch.reject(Object.assign(new Error('duplicate key'), { code: '23505' }));
    (await harness.next()).resolve([row('a1', 1)]);
    (await harness.next()).reject(
      Object.assign(new Error('tab b does not exist'), { code: 'CL404' }),
    );
    expect((await first)[0]!.seq).toBe(1);
    expect(await second.catch((error: unknown) => error)).toBeInstanceOf(NotFoundError);
  });

  it('fails every append of a batch whose connection was lost, with that error', async () => {
    const { harness, appends, batch } = await queuedBehindLone([
      request('a', 'a1'),
      request('b', 'b1'),
    ]);
    const lost = new Error('Connection terminated unexpectedly');
    batch.reject(lost);
    expect(
      await Promise.all(appends.map((append) => append.catch((error: unknown) => error))),
    ).toEqual([lost, lost]);
    expect(harness.pending()).toBe(0);
  });

  it('never runs two batches of one tab at once, even with lanes free', async () => {
    const harness = scriptedClient();
    const commit = createGroupCommit(harness.client, { lanes: 4, limits, metrics });
    const first = commit.append(request('a', 'a1'));
    const firstCall = await harness.next();
    const second = commit.append(request('a', 'a2'));
    const other = commit.append(request('b', 'b1'));
    // b goes on a free lane; a2 waits for a1, although lanes are free.
    const otherCall = await harness.next();
    expect(otherCall.values[0]).toBe('b');
    expect(harness.pending()).toBe(0);
    otherCall.resolve([row('b1', 1)]);
    await other;
    // Let a freed lane look at the queue: a2 must still wait for a1.
    for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(harness.pending()).toBe(0);
    firstCall.resolve([row('a1', 1)]);
    await first;
    const secondCall = await harness.next();
    expect(secondCall.values[0]).toBe('a');
    secondCall.resolve([row('a2', 2)]);
    expect((await second)[0]!.seq).toBe(2);
    await commit.idle();
  });
});
