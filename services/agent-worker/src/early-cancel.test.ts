import { cancelSubject } from '@chunklog/chunk-core';
import type { ChunkStore } from '@chunklog/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertGapFree, createHarness, type Harness } from './worker-test-harness';

let harness: Harness | null;
let release = () => {};
let reachedReadAll = () => {};
const readAllReached = new Promise<void>((resolve) => {
  reachedReadAll = resolve;
});

beforeAll(async () => {
  harness = await createHarness('nats');
  if (!harness) return;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  // The only worker here loads logs slowly: its first readAll waits for the test to let it go.
  const base = harness.store;
  const slowStore = new Proxy(base, {
    get(target, property, receiver) {
      if (property !== 'readAll') return Reflect.get(target, property, receiver);
      return async (...args: Parameters<ChunkStore['readAll']>) => {
        reachedReadAll();
        await gate;
        return target.readAll(...args);
      };
    },
  });
  await harness.startWorker({ store: slowStore });
});
afterAll(async () => {
  release();
  await harness?.close();
});

describe('cancel', () => {
  it('stops a turn cancelled while its worker is still loading the log', async (context) => {
    if (!harness) return context.skip();
    const tab = await harness.newTab();
    await harness.send(tab.id, 'cancel me early [[sim: words 200]] [[sim: rate 50]]');
    // The lease is taken (the tab shows as running) and the worker is reading the log.
    await readAllReached;
    expect((await harness.store.getTab(tab.id)).status).toBe('running');
    await harness.bus.publish(cancelSubject(tab.id), { tabId: tab.id });
    release();
    const [done] = await harness.turnsDone(tab.id, 1);
    expect(done?.event === 'turn-done' && done.data.reason).toBe('cancelled');
    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    // The message is kept; the 200-word answer never got written in full.
    expect(log[0]).toMatchObject({ role: 'user', type: 'text' });
    const answer = log.find((chunk) => chunk.role === 'assistant' && chunk.type === 'text');
    expect(answer === undefined || (answer.type === 'text' && answer.data.interrupted)).toBe(true);
  });
});
