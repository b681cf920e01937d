/** `npm run db:migrate`: applies the committed migrations to DATABASE_URL, then exits. */
import { describeError } from '@chunklog/chunk-core';
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
} catch (error) {
  // One line naming the database and the cause, not a driver stack trace.
  const url = new URL(parsed.data.DATABASE_URL);
  console.error(
    `db:migrate: could not migrate ${url.host}${url.pathname}: ${describeError(error)}`,
  );
  process.exitCode = 1;
} finally {
  await store.close();
}
