/** `npm run db:migrate`: applies the committed migrations to DATABASE_URL, then exits. */
import { describeError } from '@chunklog/chunk-core';
import { databaseEnv, parseEnv } from '@chunklog/runtime';
import { z } from 'zod';
import { createPostgresStore } from '../postgres/create-postgres-store';

// A one-shot command: plain lines for the person or the job that runs it, no JSON log.
let databaseUrl: string;
try {
  databaseUrl = parseEnv(z.object(databaseEnv), process.env).DATABASE_URL;
} catch (error) {
  console.error(`db:migrate: ${describeError(error)}`);
  process.exit(1);
}
const store = createPostgresStore({ url: databaseUrl, maxConnections: 1 });
try {
  await store.migrate();
  console.log('db:migrate: database is up to date');
} catch (error) {
  // One line naming the database and the cause, not a driver stack trace.
  const url = new URL(databaseUrl);
  console.error(
    `db:migrate: could not migrate ${url.host}${url.pathname}: ${describeError(error)}`,
  );
  process.exitCode = 1;
} finally {
  await store.close();
}
