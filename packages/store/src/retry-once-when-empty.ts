/**
 * Runs an insert-or-select statement again when it saw no row: a concurrent inserter's row is
 * invisible to the statement's snapshot when its insert waited on it and did nothing; a second
 * statement takes a fresh snapshot and sees it.
 */
export async function retryOnceWhenEmpty<T>(statement: () => Promise<T[]>): Promise<T[]> {
  const rows = await statement();
  return rows.length > 0 ? rows : statement();
}
