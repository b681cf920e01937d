import { InvalidInputError } from '@chunklog/chunk-core';
import { z } from 'zod';

const TabCursorSchema = z.object({ position: z.number().int().positive() });

/** The opaque cursor of a tab listing: the creation position of the last tab returned. */
export function encodeTabCursor(position: number): string {
  return Buffer.from(JSON.stringify({ position }), 'utf8').toString('base64url');
}

export function decodeTabCursor(cursor: string): number {
  try {
    return TabCursorSchema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')))
      .position;
  } catch (error) {
    throw new InvalidInputError('malformed tab cursor', { cause: error });
  }
}
