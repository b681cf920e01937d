import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SqlClient } from '../sql-client';

/** drizzle's journal of the committed migrations: each one's tag and creation time. */
interface Journal {
  entries: Array<{ when: number }>;
}

/**
 * True when drizzle's migrator would apply nothing to the database: its migrations table holds
 * a migration at least as recent as the newest one in `migrationsFolder`. drizzle-orm decides
 * the same way (a migration runs when the newest applied one was created before it), so a
 * start on a current database can skip loading drizzle and reading every SQL file: two queries.
 */
export async function migrationsCurrent(
  client: SqlClient,
  migrationsFolder: string,
): Promise<boolean> {
  const journal = JSON.parse(
    readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8'),
  ) as Journal;
  const newest = Math.max(0, ...journal.entries.map((entry) => entry.when));
  const [table] = await client.query<{ present: boolean }>(
    `select to_regclass('drizzle.__drizzle_migrations') is not null as present`,
  );
  if (!table?.present) return false;
  // drizzle's own question: the newest applied migration, by its creation time.
  const [applied] = await client.query<{ created_at: string | number | null }>(
    'select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1',
  );
  return applied?.created_at != null && Number(applied.created_at) >= newest;
}
