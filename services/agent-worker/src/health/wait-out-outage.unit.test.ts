import { ConflictError } from '@chunklog/chunk-core';
import type { ChunkStore } from '@chunklog/store';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { StoreHealth } from './store-health';
import { patientStore, untilStoreAnswers } from './wait-out-outage';

const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
const logger = pino({ level: 'silent' });

/** A call that fails for want of the database `failures` times, then answers. */
function flaky<T>(failures: number, answer: T) {
  let calls = 0;
  const call = async () => {
    calls++;
    if (calls <= failures) throw refused();
    return answer;
  };
  return { call, calls: () => calls };
}

describe('untilStoreAnswers', () => {
  it('makes the call again until the store answers, and says the store was unreachable meanwhile', async () => {
    const health = new StoreHealth();
    const seen: boolean[] = [];
    const { call, calls } = flaky(3, 'stored');
    const result = await untilStoreAnswers('storing', call, {
      health,
      logger,
      giveUp: () => null,
      whileWaiting: async () => {
        seen.push(health.reachable);
      },
    });
    expect(result).toBe('stored');
    expect(calls()).toBe(4);
    expect(seen).toEqual([false, false, false]);
    expect(health.reachable).toBe(true);
  });

  it('passes an answer through at once, an error one included', async () => {
    let calls = 0;
    const failing = untilStoreAnswers(
      'appending',
      async () => {
        calls++;
        throw new ConflictError('expected seq 3');
      },
      { health: new StoreHealth(), logger, giveUp: () => null },
    );
    await expect(failing).rejects.toBeInstanceOf(ConflictError);
    expect(calls).toBe(1);
  });

  it('stops waiting when told to give up', async () => {
    const { call } = flaky(Number.POSITIVE_INFINITY, 'never');
    const lost = new Error('lease lost');
    let checks = 0;
    const waiting = untilStoreAnswers('renewing', call, {
      health: new StoreHealth(),
      logger,
      giveUp: () => (++checks >= 2 ? lost : null),
    });
    await expect(waiting).rejects.toBe(lost);
  });
});

describe('patientStore', () => {
  it('waits out an outage on every call of the store', async () => {
    const { call, calls } = flaky(2, ['tab']);
    const store = { tabsNeedingWork: call } as unknown as ChunkStore;
    const patient = patientStore(store, { health: new StoreHealth(), logger, giveUp: () => null });
    expect(await patient.tabsNeedingWork(10)).toEqual(['tab']);
    expect(calls()).toBe(3);
  });
});
