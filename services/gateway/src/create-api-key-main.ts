/**
 * Creates an API key for a tenant (creating the tenant if needed) and prints it once; only its
 * hash is stored. Usage: `DATABASE_URL=... npm run create-api-key -- <tenant>`
 */
import { randomBytes } from 'node:crypto';
import { createPostgresStore } from '@chunklog/store';
import { z } from 'zod';

const ArgumentsSchema = z.object({
  DATABASE_URL: z.url({ error: 'DATABASE_URL is required: a postgres:// URL' }),
  tenant: z
    .string({ error: 'usage: npm run create-api-key -- <tenant-name>' })
    .regex(/^[^:,\s]+$/, { error: 'a tenant name has no colon, comma or space' }),
});
const parsed = ArgumentsSchema.safeParse({
  DATABASE_URL: process.env.DATABASE_URL,
  tenant: process.argv[2],
});
if (!parsed.success) {
  for (const issue of parsed.error.issues) console.error(issue.message);
  process.exit(1);
}

const store = createPostgresStore({ url: parsed.data.DATABASE_URL });
try {
  await store.migrate();
  const tenant = await store.createTenant({ name: parsed.data.tenant });
  const key = `ck_${randomBytes(24).toString('base64url')}`;
  await store.addApiKey(tenant.id, key);
  console.log(`tenant ${tenant.name} (${tenant.id})`);
  console.log(`api key (shown once, only its hash is stored): ${key}`);
} finally {
  await store.close();
}
