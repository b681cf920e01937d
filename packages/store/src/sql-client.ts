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
