import { mapDatabaseError } from './map-database-error';

/** The one thing the store needs from a database driver: run a parameterized statement. */
export interface SqlClient {
  /**
   * Runs one statement and returns its rows. `name` marks a hot statement the driver may
   * prepare once per connection; drivers without prepared statements ignore it.
   */
  query<Row extends Record<string, unknown>>(
    text: string,
    values?: unknown[],
    name?: string,
  ): Promise<Row[]>;
}

/** Runs one statement, turning a driver error into chunklog's named errors (`subject` names it). */
export type RunStatement = <Row extends Record<string, unknown>>(
  subject: string,
  text: string,
  values: unknown[],
  name?: string,
) => Promise<Row[]>;

export function statementRunner(client: SqlClient): RunStatement {
  return async (subject, text, values, name) => {
    try {
      return await client.query(text, values, name);
    } catch (error) {
      throw mapDatabaseError(error, subject);
    }
  };
}
