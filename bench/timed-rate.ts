/**
 * Runs `operation` on `connections` loops for `phaseMs`; returns rows per second. The server
 * is shared: when it has no connection left for this phase (53300), the phase waits and runs
 * again.
 */
export async function rate(
  phaseMs: number,
  connections: number,
  operation: () => Promise<number>,
): Promise<number> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await timedRate(phaseMs, connections, operation);
    } catch (error) {
      if ((error as { code?: string }).code !== '53300' || attempt === 10) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

async function timedRate(
  phaseMs: number,
  connections: number,
  operation: () => Promise<number>,
): Promise<number> {
  // Warm the pool and the prepared statements before the clock starts.
  await Promise.all(Array.from({ length: connections }, () => operation()));
  let rows = 0;
  const started = performance.now();
  const deadline = started + phaseMs;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const done = await operation();
        rows += done;
      }
    }),
  );
  return rows / ((performance.now() - started) / 1000);
}
