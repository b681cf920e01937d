import { InvalidInputError, type NewChunk, NewChunkSchema } from '@chunklog/chunk-core';
import { z } from 'zod';
import { containsNul } from '../contains-nul';
import type { AppendRequest } from './group-commit';

/** The largest chunk data the store accepts, serialized as JSON (bytes of UTF-8). */
export const maxChunkDataBytes = 1024 * 1024;
/** The most chunks one append may carry (one turn step's blocks fit many times over). */
export const maxChunksPerAppend = 1000;

const AppendOptionsSchema = z
  .object({ expectedSeq: z.number().int().positive().optional() })
  .strict()
  .optional();

/**
 * One chunk as chunklog_append takes it in its JSON array. Its ids (uuids), role and type
 * (enum values) were validated and need no escaping.
 */
function chunkJson(chunk: NewChunk, dataJson: string): string {
  return `{"id":"${chunk.id}","turnId":"${chunk.turnId}","step":${chunk.step},"role":"${chunk.role}","type":"${chunk.type}","data":${dataJson}}`;
}

/**
 * Checks an append before it touches the database and returns it as the group commit takes it,
 * its chunks' JSON built once. Everything a caller can get wrong is an InvalidInputError here,
 * so a bad request never writes anything and never surfaces a driver error.
 */
export function validateAppend(tabId: string, chunks: unknown, options: unknown): AppendRequest {
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
  const chunkIds: string[] = [];
  let chunksJson = '[';
  for (let index = 0; index < chunks.length; index += 1) {
    const parsed = NewChunkSchema.safeParse(chunks[index]);
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
    parsedChunks.push(chunk);
    chunkIds.push(chunk.id);
    chunksJson += `${index === 0 ? '' : ','}${chunkJson(chunk, dataJson)}`;
  }
  return { tabId, chunks: parsedChunks, chunksJson: `${chunksJson}]`, chunkIds, expectedSeq };
}
