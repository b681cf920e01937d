import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** The gateway package's version (its package.json), the OpenAPI document's `info.version`. */
export const gatewayVersion = z
  .object({ version: z.string().min(1) })
  .parse(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))).version;
