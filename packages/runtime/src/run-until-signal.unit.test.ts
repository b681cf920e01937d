import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from './create-logger';
import { runUntilSignal, type SignalProcess } from './run-until-signal';

function standIn() {
  const emitter = new EventEmitter();
  const exits: number[] = [];
  const host: SignalProcess = {
    on: (signal, listener) => emitter.on(signal, listener),
    exit: (code) => {
      exits.push(code);
    },
  };
  const messages: string[] = [];
  const logger = createLogger(
    { service: 'test' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) {
          messages.push((JSON.parse(line) as { msg: string }).msg);
        }
        done();
      },
    }),
  );
  return { emitter, exits, host, logger, messages };
}

/** Lets pending promise callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('runUntilSignal', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('stops once on SIGTERM and exits 0; a second signal changes nothing', async () => {
    const { emitter, exits, host, logger, messages } = standIn();
    const stop = vi.fn(async () => {});
    const signal = runUntilSignal({ logger, stop, host });
    expect(stop).not.toHaveBeenCalled();
    emitter.emit('SIGTERM');
    emitter.emit('SIGINT');
    expect(await signal).toBe('SIGTERM');
    await settle();
    expect(stop).toHaveBeenCalledTimes(1);
    expect(exits).toEqual([0]);
    expect(messages).toEqual(['shutting down', 'already shutting down', 'stopped']);
  });

  it('exits 1 when stopping fails, and logs why', async () => {
    const { emitter, exits, host, logger, messages } = standIn();
    void runUntilSignal({
      logger,
      stop: async () => {
        throw new Error('close failed');
      },
      host,
    });
    emitter.emit('SIGINT');
    await settle();
    expect(exits).toEqual([1]);
    expect(messages).toEqual(['shutting down', 'shutdown failed']);
  });

  it('exits 1 when stopping outlasts the timeout', async () => {
    const { emitter, exits, host, logger, messages } = standIn();
    void runUntilSignal({ logger, stop: () => new Promise(() => {}), timeoutMs: 5_000, host });
    emitter.emit('SIGTERM');
    await settle();
    vi.advanceTimersByTime(4_999);
    expect(exits).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(exits).toEqual([1]);
    expect(messages).toEqual(['shutting down', 'shutdown timed out']);
  });
});
