/** `npm run db:migrate`: applies the committed migrations to DATABASE_URL, then exits. */
import { z } from 'zod';
import { createPostgresStore } from './create-postgres-store';

const EnvironmentSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
});

const parsed = EnvironmentSchema.safeParse(process.env);
if (!parsed.success) {
  console.error(`db:migrate: ${z.prettifyError(parsed.error)}`);
  process.exit(1);
}
const store = createPostgresStore({ url: parsed.data.DATABASE_URL, maxConnections: 1 });
try {
  await store.migrate();
  console.log('db:migrate: database is up to date');
} finally {
  await store.close();
}
