import { InvalidInputError, NotFoundError } from '@chunklog/chunk-core';
import { z } from 'zod';
import { containsNul } from './contains-nul';

/** The largest page, tab listing or inbox message the store serves or accepts. */
export const maxPageLimit = 500;

export const IdSchema = z.uuid();
export const TenantIdSchema = z.string().min(1).max(200);
export const OwnerSchema = z.string().min(1).max(200);

/** Postgres text and jsonb cannot hold U+0000: refused here, with a message, not by the driver. */
export const noNul = (value: unknown) => !containsNul(value);

/** Parses caller input; anything wrong is an InvalidInputError naming `what`. */
export function parse<Output>(schema: z.ZodType<Output>, value: unknown, what: string): Output {
  const result = schema.safeParse(value);
  if (!result.success) throw new InvalidInputError(`invalid ${what}: ${result.error.message}`);
  return result.data;
}

/** A malformed id cannot name a stored tab: it is "not found", like any unknown id. */
export function requireTabId(tabId: unknown): string {
  if (!IdSchema.safeParse(tabId).success) throw new NotFoundError(`tab ${String(tabId)} not found`);
  return tabId as string;
}

/** bigint columns arrive as strings (pg) or numbers (PGlite); the store's stay far below 2^53. */
export type BigintValue = number | string | bigint;
