import { STREAM_EVENT_NAMES } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { StreamEventSchema } from './stream-event-schema';

describe('StreamEventSchema', () => {
  it('has one variant per event a stream carries, no more', () => {
    const documented = StreamEventSchema.options.map((variant) => variant.shape.event.value);
    expect([...documented].sort()).toEqual([...STREAM_EVENT_NAMES].sort());
  });
});
