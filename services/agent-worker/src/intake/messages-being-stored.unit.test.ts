import { describe, expect, it } from 'vitest';
import { deferred } from '../testing/deferred';
import { MessagesBeingStored } from './messages-being-stored';

/** Whether `promise` has settled once pending callbacks have run. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('MessagesBeingStored', () => {
  it('settles for a tab once the messages being stored at the call are stored or failed', async () => {
    const beingStored = new MessagesBeingStored();
    const first = deferred();
    const failing = deferred();
    void beingStored.track('tab-a', () => first.promise);
    const failed = beingStored.track('tab-a', async () => {
      await failing.promise;
      throw new Error('refused');
    });
    failed.catch(() => undefined);
    const settled = beingStored.settled('tab-a');

    expect(await isSettled(settled)).toBe(false);
    first.resolve();
    expect(await isSettled(settled)).toBe(false);
    failing.resolve();
    expect(await isSettled(settled)).toBe(true);
    await expect(failed).rejects.toThrow('refused');
  });

  it('waits neither for other tabs nor for messages taken after the call', async () => {
    const beingStored = new MessagesBeingStored();
    const otherTab = deferred();
    void beingStored.track('tab-b', () => otherTab.promise);
    expect(await isSettled(beingStored.settled('tab-a'))).toBe(true);

    const earlier = deferred();
    void beingStored.track('tab-a', () => earlier.promise);
    const settled = beingStored.settled('tab-a');
    const later = deferred();
    void beingStored.track('tab-a', () => later.promise);
    earlier.resolve();
    expect(await isSettled(settled)).toBe(true);
    expect(await isSettled(beingStored.settled('tab-a'))).toBe(false);
    later.resolve();
    otherTab.resolve();
  });

  it('hands back what storing returned', async () => {
    const beingStored = new MessagesBeingStored();
    await expect(beingStored.track('tab-a', async () => true)).resolves.toBe(true);
    expect(await isSettled(beingStored.settled('tab-a'))).toBe(true);
  });
});
