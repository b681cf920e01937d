/** The share of the context window one chunk may take in a request. */
const CHUNK_WINDOW_SHARE = 0.25;

/** Bytes per token, as the worker estimates tokens everywhere (a rough, deterministic figure). */
const BYTES_PER_TOKEN = 4;

/**
 * The most UTF-8 bytes one chunk may take on the wire: a quarter of the context window. A larger
 * chunk sits after any compaction's cut, so no compaction could bring the request back under
 * the window; the wire view cuts it with a note, the log keeps it whole.
 */
export function maxChunkBytes(contextWindowTokens: number): number {
  return Math.floor(contextWindowTokens * CHUNK_WINDOW_SHARE * BYTES_PER_TOKEN);
}
