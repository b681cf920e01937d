import { describe, expect, it } from 'vitest';
import { EnvError } from './parse-env';
import { type StartProcess, startFailureLine, startStep } from './start-failure';

class Exited extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

function standIn(): StartProcess & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    writeError: (line) => lines.push(line),
    exit: (code) => {
      throw new Exited(code);
    },
  };
}

describe('startFailureLine', () => {
  it('names the service, the step and the cause with its own cause', () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:4222');
    const error = new Error('connection refused', { cause });
    expect(startFailureLine('gateway', 'NATS (NATS_URL)', error)).toBe(
      'chunklog gateway failed to start: NATS (NATS_URL): connection refused (connect ECONNREFUSED 127.0.0.1:4222)',
    );
  });

  it('lists every environment problem on the one line', () => {
    const error = new EnvError(['PORT: must be a port number', 'NATS_URL: required']);
    expect(startFailureLine('agent-worker', 'environment', error)).toBe(
      'chunklog agent-worker failed to start: environment: PORT: must be a port number; NATS_URL: required',
    );
  });
});

describe('startStep', () => {
  it('returns what the step returns, sync or async, and writes nothing', async () => {
    const host = standIn();
    expect(await startStep('gateway', 'environment', () => 1, host)).toBe(1);
    expect(await startStep('gateway', 'Postgres', async () => 2, host)).toBe(2);
    expect(host.lines).toEqual([]);
  });

  it('writes the one line and exits 1 when the step throws or rejects', async () => {
    const host = standIn();
    await expect(
      startStep(
        'gateway',
        'Postgres (DATABASE_URL)',
        async () => {
          throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        },
        host,
      ),
    ).rejects.toEqual(new Exited(1));
    expect(host.lines).toEqual([
      'chunklog gateway failed to start: Postgres (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:5432',
    ]);
  });
});
