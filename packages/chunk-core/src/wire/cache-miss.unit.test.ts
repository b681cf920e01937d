import { describe, expect, it } from 'vitest';
import { cacheMissOfMessage, listCacheMisses } from './cache-miss';

describe('cacheMissOfMessage', () => {
  it('reads the reason and the missed tokens of a response that missed the cache', () => {
    const message = {
      id: 'msg_1',
      diagnostics: {
        cache_miss_reason: { type: 'messages_changed', cache_missed_input_tokens: 1234 },
      },
    };
    expect(cacheMissOfMessage(message)).toEqual({
      reason: 'messages_changed',
      missedInputTokens: 1234,
    });
  });

  it('keeps a reason without a token figure, and one the API may add later', () => {
    const notFound = { diagnostics: { cache_miss_reason: { type: 'previous_message_not_found' } } };
    expect(cacheMissOfMessage(notFound)).toEqual({ reason: 'previous_message_not_found' });
    const later = { diagnostics: { cache_miss_reason: { type: 'region_changed' } } };
    expect(cacheMissOfMessage(later)).toEqual({ reason: 'region_changed' });
  });

  it('is undefined for a hit, for no diagnostics and for a malformed reason', () => {
    expect(cacheMissOfMessage({ diagnostics: { cache_miss_reason: null } })).toBeUndefined();
    expect(cacheMissOfMessage({ diagnostics: null })).toBeUndefined();
    expect(cacheMissOfMessage({})).toBeUndefined();
    expect(cacheMissOfMessage({ diagnostics: { cache_miss_reason: { type: 7 } } })).toBeUndefined();
  });
});

describe('listCacheMisses', () => {
  const place = { turnId: '00000000-0000-4000-8000-000000000001', step: 0 };
  const miss = (seq: number) => ({
    ...place,
    seq,
    data: { text: 'answer', cacheMiss: { reason: 'messages_changed', missedInputTokens: seq } },
  });
  const hit = (seq: number) => ({ ...place, seq, data: { text: 'answer' } });

  it('lists the recorded misses in seq order, each placed in the log', () => {
    expect(listCacheMisses([hit(1), miss(2), hit(3), miss(4)])).toEqual([
      { ...place, seq: 2, reason: 'messages_changed', missedInputTokens: 2 },
      { ...place, seq: 4, reason: 'messages_changed', missedInputTokens: 4 },
    ]);
  });

  it('keeps only the latest ones', () => {
    const log = [miss(1), miss(2), hit(3), miss(4)];
    expect(listCacheMisses(log, 2).map((entry) => entry.seq)).toEqual([2, 4]);
  });
});
