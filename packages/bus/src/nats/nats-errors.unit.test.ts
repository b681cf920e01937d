import { NotFoundError } from '@chunklog/chunk-core';
import {
  ClosedConnectionError,
  NoRespondersError as NatsNoRespondersError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { BusUnavailableError, NoRespondersError, RequestTimeoutError } from '../bus-errors';
import { hasNoResponders, toBusError, toRequestError } from './nats-errors';
import { natsNames } from './nats-names';

describe('toBusError', () => {
  it('turns a closed connection into BusUnavailableError naming what the bus was doing', () => {
    const error = toBusError(new ClosedConnectionError(), 'publishing to a.b');
    expect(error).toBeInstanceOf(BusUnavailableError);
    expect((error as Error).message).toMatch(/^NATS unavailable while publishing to a\.b: /);
    expect((error as Error).cause).toBeInstanceOf(ClosedConnectionError);
  });

  it("passes chunklog's own errors and unknown errors through unchanged", () => {
    const own = new NotFoundError('no tab');
    const other = new TypeError('bug');
    expect(toBusError(own, 'x')).toBe(own);
    expect(toBusError(other, 'x')).toBe(other);
  });
});

describe('toRequestError', () => {
  it('tells nobody serving the subject from nobody answering in time', () => {
    const noResponders = new RequestError('no responders', {
      cause: new NatsNoRespondersError('a.b'),
    });
    expect(toRequestError(noResponders, 'a.b', 100)).toBeInstanceOf(NoRespondersError);
    const timedOut = toRequestError(new TimeoutError(), 'a.b', 100);
    expect(timedOut).toBeInstanceOf(RequestTimeoutError);
    expect((timedOut as Error).message).toBe('no reply on a.b within 100 ms');
  });

  it('finds a no-responders answer deep in the cause chain', () => {
    const wrapped = new Error('publish failed', {
      cause: new Error('jetstream', { cause: new NatsNoRespondersError('q') }),
    });
    expect(hasNoResponders(wrapped)).toBe(true);
    expect(hasNoResponders(new Error('other'))).toBe(false);
  });
});

describe('natsNames', () => {
  it('prefixes subjects, streams and consumers, and strips the prefix from received subjects', () => {
    const names = natsNames('test_1');
    expect(names.toWire('chunklog.tab.t.evt.chunk-seal')).toBe(
      'test_1.chunklog.tab.t.evt.chunk-seal',
    );
    expect(names.fromWire('test_1.chunklog.tab.t.evt.chunk-seal')).toBe(
      'chunklog.tab.t.evt.chunk-seal',
    );
    expect(names.stream('chunklog-intake')).toBe('test_1_chunklog-intake');
    expect(names.consumer('chunklog-intake')).toBe('test_1_chunklog-intake-consumers');
    expect(names.queueSubject('chunklog-intake')).toBe('test_1.chunklog.queue.chunklog-intake');
  });

  it('uses the bare names without a prefix, and refuses a prefix NATS could not carry', () => {
    expect(natsNames('').stream('q')).toBe('q');
    expect(natsNames('').toWire('a.b')).toBe('a.b');
    expect(() => natsNames('a.b')).toThrow('invalid subject prefix "a.b"');
  });
});
