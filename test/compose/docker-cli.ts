import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs a command and returns its stdout; fails with its stderr. */
export async function command(file: string, args: readonly string[], env?: NodeJS.ProcessEnv) {
  try {
    const { stdout } = await run(file, [...args], {
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const failed = error as Error & { stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${failed.stderr ?? failed.message}`, {
      cause: error,
    });
  }
}

/** `docker <args>`. */
export function docker(...args: string[]): Promise<string> {
  return command('docker', args);
}

/** The compose command run.sh picked: `docker compose` (v2) or `docker-compose` (v1). */
function composeCommand(): [string, string[]] {
  const words = (process.env.COMPOSE ?? 'docker compose').split(' ');
  return [words[0]!, words.slice(1)];
}

/** One compose project: its files, its name and the variables it is brought up with. */
export class ComposeProject {
  constructor(
    readonly name: string,
    private readonly files: readonly string[],
    private readonly env: Record<string, string>,
  ) {}

  /** `compose -p <name> -f <file>... <args>`. */
  run(...args: string[]): Promise<string> {
    const [file, prefix] = composeCommand();
    const fileArgs = this.files.flatMap((path) => ['-f', path]);
    return command(file, [...prefix, '-p', this.name, ...fileArgs, ...args], this.env);
  }

  /** The ids of a service's containers, running or not. */
  async containers(service: string): Promise<string[]> {
    const out = await docker(
      'ps',
      '-aq',
      '--filter',
      `label=com.docker.compose.project=${this.name}`,
      '--filter',
      `label=com.docker.compose.service=${service}`,
    );
    return out.split('\n').filter(Boolean);
  }

  /** Whatever of the project the engine still has: containers, volumes and networks. */
  async leftovers(): Promise<string[]> {
    const label = `label=com.docker.compose.project=${this.name}`;
    const [containers, volumes, networks] = await Promise.all([
      docker('ps', '-aq', '--filter', label),
      docker('volume', 'ls', '-q', '--filter', label),
      docker('network', 'ls', '-q', '--filter', label),
    ]);
    return [containers, volumes, networks].flatMap((out) => out.split('\n').filter(Boolean));
  }
}

/** A container's exit code and whether it runs. */
export async function containerState(id: string): Promise<{ running: boolean; exitCode: number }> {
  const out = await docker('inspect', '-f', '{{.State.Running}} {{.State.ExitCode}}', id);
  const [running, exitCode] = out.trim().split(' ');
  return { running: running === 'true', exitCode: Number(exitCode) };
}
