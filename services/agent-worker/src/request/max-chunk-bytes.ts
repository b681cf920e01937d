/** The share of the context window one chunk may take in a request. */
const CHUNK_WINDOW_SHARE = 0.25;

/** Bytes per token, as the worker estimates tokens everywhere (a rough, deterministic figure). */
const BYTES_PER_TOKEN = 4;

/**
 * The most UTF-8 bytes one chunk may take on the wire for a model with this context window: a
 * quarter of the window. A larger chunk (a tool that returned a whole file) would leave no room
 * for the rest of the conversation, and since it sits after any compaction's cut, no compaction
 * could bring the request back under the window. chunk-core cuts it in the wire view with a note
 * (`fitChunkForWire`); the log keeps it whole.
 */
export function maxChunkBytes(contextWindowTokens: number): number {
  return Math.floor(contextWindowTokens * CHUNK_WINDOW_SHARE * BYTES_PER_TOKEN);
}
