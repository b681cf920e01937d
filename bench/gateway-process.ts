import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, sleep } from '@chunklog/test-infra';

/** A gateway running as its own process (`services/gateway/src/main.ts`, as deployed). */
export interface GatewayProcess {
  baseUrl: string;
  process: ChildProcess;
  /** Creates a tab through the API; returns its id. */
  createTab(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a gateway on the given database and NATS, with `key` as its one API key. */
export async function startGatewayProcess(input: {
  databaseUrl: string;
  natsUrl: string;
  subjectPrefix: string;
  key: string;
  /** Added to the gateway's environment (OTEL_* for one). */
  environment?: Record<string, string>;
}): Promise<GatewayProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const gatewayProcess = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('../services/gateway/src/main.ts', import.meta.url))],
    {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: input.databaseUrl,
        NATS_URL: input.natsUrl,
        NATS_SUBJECT_PREFIX: input.subjectPrefix,
        PORT: String(port),
        API_KEYS: `bench:${input.key}`,
        STREAM_TICKET_SECRET: 'bench-ticket-secret-0123456789',
        RATE_LIMIT_PER_MINUTE: '1000000',
        LOG_LEVEL: 'warn',
        ...input.environment,
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const stop = async () => {
    if (gatewayProcess.exitCode !== null) return;
    gatewayProcess.kill('SIGTERM');
    await new Promise((resolve) => gatewayProcess.once('exit', resolve));
  };
  try {
    for (let attempt = 0; ; attempt++) {
      const ready = await fetch(`${baseUrl}/readyz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) break;
      if (attempt > 300) throw new Error('gateway did not become ready');
      await sleep(100);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    baseUrl,
    process: gatewayProcess,
    async createTab() {
      const response = await fetch(`${baseUrl}/v1/tabs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${input.key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      return ((await response.json()) as { tab: { id: string } }).tab.id;
    },
    stop,
  };
}
