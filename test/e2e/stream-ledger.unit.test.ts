/** The end-to-end suites trust StreamLedger to catch breaches: here it is shown that it does. */
import { randomUUID } from 'node:crypto';
import type { Chunk } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { StreamLedger } from './stream-ledger';

const tabId = randomUUID();
const turnId = randomUUID();

function textChunk(seq: number, text: string, id = randomUUID()): Chunk {
  return {
    id,
    tabId,
    seq,
    turnId,
    step: 0,
    role: 'assistant',
    type: 'text',
    data: { text },
    createdAt: 1,
  };
}

function seal(ledger: StreamLedger, chunk: Chunk): void {
  ledger.receive('chunk-seal', { tabId, chunk }, String(chunk.seq));
}

function open(ledger: StreamLedger, id: string): void {
  ledger.receive(
    'chunk-open',
    { tabId, id, turnId, step: 0, role: 'assistant', type: 'text' },
    undefined,
  );
}

function delta(ledger: StreamLedger, id: string, offset: number, text: string): void {
  ledger.receive('chunk-delta', { tabId, id, offset, text }, undefined);
}

describe('StreamLedger', () => {
  it('accepts a resume mid-block that replays the block from offset 0', () => {
    const ledger = new StreamLedger();
    const id = randomUUID();
    ledger.startConnection();
    seal(ledger, textChunk(1, 'question'));
    open(ledger, id);
    delta(ledger, id, 0, 'Hello ');
    ledger.endConnection();
    ledger.startConnection();
    open(ledger, id);
    delta(ledger, id, 0, 'Hello wor');
    delta(ledger, id, 9, 'ld');
    seal(ledger, textChunk(2, 'Hello world', id));
    expect(ledger.violations).toEqual([]);
    expect(ledger.midBlockDisconnects).toBe(1);
    expect(ledger.blockTexts().get(id)?.text).toBe('Hello world');
  });

  it('flags a duplicate seq, a gap, and a seal whose id is not its seq', () => {
    const ledger = new StreamLedger();
    ledger.startConnection();
    seal(ledger, textChunk(1, 'a'));
    seal(ledger, textChunk(1, 'a'));
    seal(ledger, textChunk(3, 'c'));
    ledger.receive('chunk-seal', { tabId, chunk: textChunk(2, 'b') }, '7');
    expect(ledger.violations).toHaveLength(3);
  });

  it('flags a delta sent twice, a skipped delta, and a block sealed short of what streamed', () => {
    const ledger = new StreamLedger();
    const id = randomUUID();
    ledger.startConnection();
    open(ledger, id);
    delta(ledger, id, 0, 'ab');
    delta(ledger, id, 0, 'ab');
    delta(ledger, id, 5, 'xyz');
    seal(ledger, textChunk(1, 'abc', id));
    expect(ledger.violations).toHaveLength(3);
  });

  it('flags a delta without its open, an open after the seal, and a replay that contradicts the text', () => {
    const ledger = new StreamLedger();
    const id = randomUUID();
    ledger.startConnection();
    delta(ledger, randomUUID(), 0, 'orphan');
    open(ledger, id);
    delta(ledger, id, 0, 'Hello');
    ledger.startConnection();
    open(ledger, id);
    delta(ledger, id, 0, 'Jello there');
    seal(ledger, textChunk(1, 'Hello there', id));
    open(ledger, id);
    expect(ledger.violations).toHaveLength(4);
  });

  it('records a turn-retry, and flags one that breaks its schema', () => {
    const ledger = new StreamLedger();
    ledger.startConnection();
    const retry = {
      tabId,
      turnId,
      step: 0,
      retry: 1,
      maxRetries: 4,
      delayMs: 500,
      reason: '529 overloaded_error',
    };
    ledger.receive('turn-retry', retry, undefined);
    expect(ledger.turnRetries).toEqual([retry]);
    expect(ledger.violations).toEqual([]);
    ledger.receive('turn-retry', { ...retry, retry: 0 }, undefined);
    expect(ledger.violations).toHaveLength(1);
  });
});
