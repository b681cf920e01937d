import { ChunklogError } from '@chunklog/chunk-core';
import type { ContextBuilder } from './gateway-context';

/** Placeholder until chunk-core's request builder lands: answers 503 rather than a guess. */
export const defaultContextBuilder: ContextBuilder = () => {
  throw new ChunklogError('unavailable', 'no request builder is configured for /context');
};
