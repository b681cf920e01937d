import {
  GenericContainer,
  getContainerRuntimeClient,
  type StartedTestContainer,
  Wait,
} from 'testcontainers';

// Read by testcontainers when it first finds the engine. Ryuk, its reaper, needs an image from a
// registry, so it is off and stop() removes the containers. A local engine's ports are reached
// on loopback (run.sh starts dockerd with --ip=127.0.0.1); testcontainers would otherwise guess
// the bridge's gateway address when it runs inside a container.
process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
if (!process.env.DOCKER_HOST) process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';

/** The images the containers run: the same tags the compose file uses. */
export const TEST_CONTAINER_IMAGES = { postgres: 'postgres:15', nats: 'nats:2-alpine' } as const;

/** Servers started for a test run; stop() removes their containers. */
export interface TestContainers {
  /** Admin URL of the Postgres server, when one was started. */
  databaseUrl?: string;
  /** URL of the NATS (JetStream) server, when one was started. */
  natsUrl?: string;
  stop(): Promise<void>;
}

/** Whether a Docker engine answers (testcontainers' own discovery: DOCKER_HOST, the socket…). */
export async function containerEngineReachable(): Promise<boolean> {
  try {
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

function startPostgres(): Promise<StartedTestContainer> {
  return (
    new GenericContainer(TEST_CONTAINER_IMAGES.postgres)
      .withEnvironment({
        POSTGRES_USER: 'postgres',
        POSTGRES_PASSWORD: 'postgres',
        POSTGRES_DB: 'test',
      })
      .withCommand(['postgres', '-c', 'fsync=off', '-c', 'max_connections=300'])
      .withTmpFs({ '/var/lib/postgresql/data': 'rw' })
      .withExposedPorts(5432)
      // Over TCP: the first boot's temporary server listens on the Unix socket only.
      .withWaitStrategy(Wait.forSuccessfulCommand('pg_isready -h 127.0.0.1 -U postgres -d test'))
      .start()
  );
}

function startNats(): Promise<StartedTestContainer> {
  return new GenericContainer(TEST_CONTAINER_IMAGES.nats)
    .withCommand(['-js', '-sd', '/tmp/nats'])
    .withExposedPorts(4222)
    .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
    .start();
}

/**
 * Starts the servers asked for as containers on the local engine (the images must be there: no
 * registry is asked); on failure, stops those that did start.
 */
export async function startTestContainers(which: {
  postgres: boolean;
  nats: boolean;
}): Promise<TestContainers> {
  const started = await Promise.allSettled([
    which.postgres ? startPostgres() : undefined,
    which.nats ? startNats() : undefined,
  ]);
  const [postgres, nats] = started.map((result) =>
    result.status === 'fulfilled' ? result.value : undefined,
  );
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    // No reaper: what did start must not outlive the run.
    await Promise.all([postgres?.stop(), nats?.stop()]);
    throw failed.reason;
  }
  const url = (container: StartedTestContainer, scheme: string, port: number, path = '') =>
    `${scheme}://${container.getHost()}:${container.getMappedPort(port)}${path}`;
  return {
    ...(postgres
      ? {
          databaseUrl: url(postgres, 'postgres', 5432, '/test').replace(
            '://',
            '://postgres:postgres@',
          ),
        }
      : {}),
    ...(nats ? { natsUrl: url(nats, 'nats', 4222) } : {}),
    async stop() {
      await Promise.all([postgres?.stop(), nats?.stop()]);
    },
  };
}
