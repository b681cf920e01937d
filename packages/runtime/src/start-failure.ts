import { describeError } from '@chunklog/chunk-core/errors';

/** The one line a main prints when it cannot start: `chunklog <service> failed to start: <what>: <cause>`. */
export function startFailureLine(service: string, what: string, error: unknown): string {
  return `chunklog ${service} failed to start: ${what}: ${describeError(error)}`;
}

/** What a main's start-up needs of its process; tests pass a stand-in. */
export interface StartProcess {
  writeError(line: string): void;
  exit(code: number): never;
}

const nodeProcess: StartProcess = {
  writeError: (line) => process.stderr.write(`${line}\n`),
  exit: (code) => process.exit(code),
};

/**
 * Runs one start-up step (read the environment, reach Postgres, connect to NATS, listen).
 * A step that fails ends the process with exit code 1 and the one start-up failure line on
 * stderr, naming the step and the cause: no stack trace for an operator to read through.
 */
export async function startStep<T>(
  service: string,
  what: string,
  step: () => T | Promise<T>,
  host: StartProcess = nodeProcess,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    host.writeError(startFailureLine(service, what, error));
    return host.exit(1);
  }
}
