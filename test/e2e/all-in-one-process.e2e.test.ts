/**
 * `npm start`'s process as an operator sees it: stdout is JSON lines one tool can parse, every
 * line naming its service; the banner goes to stderr; a bad environment is one line and exit 1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from '@chunklog/test-infra';
import { afterEach, describe, expect, it } from 'vitest';
import { repositoryRoot } from './service-process';

const entry = 'services/all-in-one/src/main.ts';
const started: ChildProcess[] = [];
const folders: string[] = [];

afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function startMain(environment: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (part: Buffer) => {
    output.stdout += part;
  });
  child.stderr.on('data', (part: Buffer) => {
    output.stderr += part;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, output, exited };
}

interface LogLine {
  level: string;
  time: string;
  service?: string;
  msg: string;
  url?: string;
}

describe('npm start (the all-in-one main) as a process', () => {
  it('writes only JSON lines on stdout, each with a level name, a time, its service and msg', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'chunklog-all-in-one-e2e-'));
    folders.push(dataDir);
    const main = startMain({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' });
    const deadline = Date.now() + 90_000;
    while (!main.output.stdout.includes('"msg":"chunklog is running"')) {
      if (main.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`no start:\n${main.output.stdout}\n${main.output.stderr}`);
      }
      await sleep(100);
    }
    const running = main.output.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine)
      .find((line) => line.msg === 'chunklog is running');
    const url = running?.url as string;
    expect(main.output.stderr).toContain(`chunklog is running at ${url}`);

    // A request makes the gateway log (the worker has logged its start).
    const response = await fetch(`${url}/v1/tabs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'logs' }),
    });
    expect(response.status).toBe(201);

    main.child.kill('SIGTERM');
    expect(await main.exited).toBe(0);
    const lines = main.output.stdout.trim().split('\n');
    const parsed = lines.map((line) => {
      expect(() => JSON.parse(line), line).not.toThrow();
      return JSON.parse(line) as LogLine;
    });
    for (const line of parsed) {
      expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(line.level);
      expect(Number.isNaN(Date.parse(line.time))).toBe(false);
      expect(['all-in-one', 'gateway', 'agent-worker', 'anthropic-sim']).toContain(line.service);
      expect(typeof line.msg).toBe('string');
    }
    const services = new Set(parsed.map((line) => line.service));
    expect(services).toEqual(new Set(['all-in-one', 'gateway', 'agent-worker']));
    expect(parsed.at(-1)).toMatchObject({ service: 'all-in-one', msg: 'stopped' });
  }, 180_000);

  it('exits 1 with one line naming every bad variable when the environment is wrong', async () => {
    const main = startMain({ PORT: 'many', MAX_STEPS: '0' });
    expect(await main.exited).toBe(1);
    expect(main.output.stdout).toBe('');
    const lines = main.output.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^chunklog all-in-one failed to start: environment: /);
    expect(lines[0]).toContain('PORT: ');
    expect(lines[0]).toContain('MAX_STEPS: ');
  }, 60_000);
});
