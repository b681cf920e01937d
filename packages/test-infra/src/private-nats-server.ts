/**
 * A nats-server child process with JetStream on its own port and store directory, for suites
 * that crash and restart the broker (never the machine's shared server, which others use).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './index';

export const NATS_SERVER_BINARY = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

export function natsServerAvailable(): boolean {
  return existsSync(NATS_SERVER_BINARY);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export class PrivateNatsServer {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    /** Deleting it while the server is down makes the next start lose every stream. */
    readonly storeDirectory: string,
  ) {}

  /** Starts a server on a free port with a fresh store directory. */
  static async start(): Promise<PrivateNatsServer> {
    const storeDirectory = await mkdtemp(join(tmpdir(), 'chunklog-e2e-nats-'));
    const server = new PrivateNatsServer(await freePort(), storeDirectory);
    await server.restart();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** (Re)starts the server on the same port and store directory: JetStream keeps its streams. */
  async restart(): Promise<void> {
    if (this.child && this.child.exitCode === null) throw new Error('nats-server already runs');
    this.child = spawn(
      NATS_SERVER_BINARY,
      ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDirectory],
      { stdio: 'ignore' },
    );
    // If the test process ends without afterAll, the broker goes with it.
    const child = this.child;
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    child.once('exit', () => process.off('exit', killOnExit));
    const deadline = Date.now() + 10_000;
    while (!(await accepts(this.port))) {
      if (Date.now() > deadline) throw new Error('the private nats-server did not start');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** SIGKILL: a crash, not a graceful shutdown. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }

  /** Kills the server and removes its store directory. */
  async dispose(): Promise<void> {
    await this.kill();
    await rm(this.storeDirectory, { recursive: true, force: true });
  }
}
