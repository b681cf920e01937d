/**
 * The store calls one message costs the worker, from its intake item (what the gateway enqueues
 * on POST /v1/tabs/:tabId/messages) to the turn's end, and the statements they send to Postgres
 * (the round trips): counted by a Proxy over the store and over the pool's query, so a change
 * that adds a round trip to every message fails here instead of passing unseen. The sweep, lease
 * renewals and the webhook dispatcher are kept out of the count (they run on timers, not per
 * message).
 */
import type { ChunkStore } from '@chunklog/store';
import { createPostgresStore } from '@chunklog/store';
import pg from 'pg';
import { expect, it } from 'vitest';
import { useHarness } from './testing/harness';

const useTestHarness = useHarness('nats');

/** The store, each method call of which is recorded by name. */
function countingStore(store: ChunkStore): { store: ChunkStore; calls: string[] } {
  const calls: string[] = [];
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(property));
        return value.apply(target, args);
      };
    },
  });
  return { store: counted, calls };
}

/** A pool whose statements are counted (each query is one round trip to Postgres). */
function countingPool(url: string): { pool: pg.Pool; statements: () => number; reset(): void } {
  const pool = new pg.Pool({ connectionString: url });
  let statements = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  Object.assign(pool, {
    query: (...args: unknown[]) => {
      statements += 1;
      return query(...args);
    },
  });
  return {
    pool,
    statements: () => statements,
    reset() {
      statements = 0;
    },
  };
}

it('stores, answers and ends one message in a fixed number of store calls', async (context) => {
  const h = useTestHarness(context);
  const sql = countingPool(h.databaseUrl);
  const inner = createPostgresStore({ pool: sql.pool });
  h.onClose(() => void sql.pool.end());
  const { store, calls } = countingStore(inner);
  const worker = await h.startWorker({
    store,
    // No timer reaches the store while the message runs: no sweep, renewal or dispatcher.
    sweepMs: 600_000,
    leaseMs: 60_000,
    webhooks: false,
  });
  // The sweep made at start, done before the count begins.
  await expect.poll(() => calls.length).toBe(1);
  calls.length = 0;
  sql.reset();

  const tab = await h.newTab();
  await h.send(tab.id, 'Say something short. [[sim: words 3]]');
  await h.turnsDone(tab.id, 1);
  // Lets the run finish: its last look at the inbox comes after turn-done.
  await worker.stop();

  expect(calls).toEqual([
    // intake: the message into the inbox
    'inboxPut',
    // claim
    'getTab',
    'inboxList',
    'acquireLease',
    // holding the tab
    'readFromLatestCompaction',
    'inboxList',
    'setTurnCancelGeneration',
    // the turn: the user chunk, the step, the answer
    'append',
    'inboxRemove',
    'inboxList',
    'cancelGeneration',
    'append',
    'inboxList',
    // the end: release, then the look for a message that came meanwhile
    'releaseLease',
    'inboxList',
  ]);
  // One statement per call, but readFromLatestCompaction's two (the latest compaction, then the
  // chunks from it): acquireLease returns the tab in its own statement.
  expect(sql.statements()).toBe(calls.length + 1);
});
