/**
 * Vitest global setup: where TEST_DATABASE_URL / TEST_NATS_URL are not set and a Docker engine
 * answers, starts the missing servers as containers (testcontainers) and hands their URLs to the
 * test files through those same variables. Explicit URLs always win; with neither, the suites
 * look for the machine's own services (testPostgresUrl, testNatsUrl).
 */
import type { TestContainers } from './test-containers';

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const which = { postgres: !process.env.TEST_DATABASE_URL, nats: !process.env.TEST_NATS_URL };
  if (!which.postgres && !which.nats) return undefined;
  // Loaded only when needed: runs with both URLs set do not pay for testcontainers.
  const { containerEngineReachable, startTestContainers } = await import('./test-containers');
  if (process.env.TEST_CONTAINERS === 'off' || !(await containerEngineReachable()))
    return undefined;
  let containers: TestContainers;
  try {
    containers = await startTestContainers(which);
  } catch (error) {
    console.warn(
      `\n!!! testcontainers could not start the test servers: ${(error as Error).message}\n`,
    );
    return undefined;
  }
  // Test files run in child processes forked after this, which inherit the environment.
  if (containers.databaseUrl) process.env.TEST_DATABASE_URL = containers.databaseUrl;
  if (containers.natsUrl) process.env.TEST_NATS_URL = containers.natsUrl;
  console.info(
    `testcontainers: ${[containers.databaseUrl, containers.natsUrl].filter(Boolean).join(', ')}`,
  );
  return () => containers.stop();
}
