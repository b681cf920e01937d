import { InvalidInputError, type NewChunk, NewChunkSchema } from '@chunklog/chunk-core';
import { z } from 'zod';
import { containsNul } from '../contains-nul';

/** The largest chunk data the store accepts, serialized as JSON (bytes of UTF-8). */
export const maxChunkDataBytes = 1024 * 1024;
/** The most chunks one append may carry (one turn step's blocks fit many times over). */
export const maxChunksPerAppend = 1000;

const AppendOptionsSchema = z
  .object({ expectedSeq: z.number().int().positive().optional() })
  .strict()
  .optional();

/**
 * Checks an append before it touches the database and returns the JSON the append function
 * takes. Everything a caller can get wrong is an InvalidInputError here, so a bad request
 * never writes anything and never surfaces a driver error.
 */
export function validateAppend(
  tabId: string,
  chunks: unknown,
  options: unknown,
): { chunks: NewChunk[]; chunksJson: string; chunkIds: string[]; expectedSeq: number | null } {
  let expectedSeq: number | null = null;
  if (options !== undefined) {
    const parsedOptions = AppendOptionsSchema.safeParse(options);
    if (!parsedOptions.success) {
      throw new InvalidInputError(`invalid append options: ${parsedOptions.error.message}`);
    }
    expectedSeq = parsedOptions.data?.expectedSeq ?? null;
  }
  if (!Array.isArray(chunks) || chunks.length === 0) {
    throw new InvalidInputError('append needs a non-empty array of chunks');
  }
  if (chunks.length > maxChunksPerAppend) {
    throw new InvalidInputError(`at most ${maxChunksPerAppend} chunks per append`);
  }
  const seen = new Set<string>();
  const parsedChunks: NewChunk[] = [];
  const rows = chunks.map((candidate, index) => {
    const parsed = NewChunkSchema.safeParse(candidate);
    if (!parsed.success) {
      throw new InvalidInputError(`chunk ${index} is invalid: ${parsed.error.message}`);
    }
    const chunk: NewChunk = parsed.data;
    if (chunk.tabId !== tabId) {
      throw new InvalidInputError(`chunk ${index} belongs to tab ${chunk.tabId}, not ${tabId}`);
    }
    if (seen.has(chunk.id)) {
      throw new InvalidInputError(`chunk id ${chunk.id} appears twice in one append`);
    }
    seen.add(chunk.id);
    parsedChunks.push(chunk);
    const dataJson = JSON.stringify(chunk.data);
    // A UTF-16 code unit is at most 3 bytes of UTF-8: shorter JSON needs no count.
    if (
      dataJson.length * 3 > maxChunkDataBytes &&
      Buffer.byteLength(dataJson, 'utf8') > maxChunkDataBytes
    ) {
      throw new InvalidInputError(`chunk ${index} data exceeds ${maxChunkDataBytes} bytes`);
    }
    // Postgres jsonb cannot hold U+0000; refusing it here keeps the error typed and early.
    if (containsNul(chunk.data)) {
      throw new InvalidInputError(`chunk ${index} data contains a NUL character`);
    }
    return `{"id":${JSON.stringify(chunk.id)},"turnId":${JSON.stringify(chunk.turnId)},"step":${chunk.step},"role":${JSON.stringify(chunk.role)},"type":${JSON.stringify(chunk.type)},"data":${dataJson}}`;
  });
  return {
    chunks: parsedChunks,
    chunksJson: `[${rows.join(',')}]`,
    chunkIds: [...seen],
    expectedSeq,
  };
}
