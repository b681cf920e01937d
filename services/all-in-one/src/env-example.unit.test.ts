import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mcpEnv, WorkerConfigSchema } from '@chunklog/agent-worker';
import { SimulatorEnvSchema } from '@chunklog/anthropic-sim';
import { GatewayConfigSchema } from '@chunklog/gateway';
import { databaseEnv, listenEnv, logEnv, modelEnv, natsEnv, shutdownEnv } from '@chunklog/runtime';
import { describe, expect, it } from 'vitest';
import { AllInOneConfigSchema } from './all-in-one-config';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const exampleLines = readFileSync(join(root, '.env.example'), 'utf8').split('\n');

/** Each variable `.env.example` lists (`NAME=default`), with the comment line above it. */
const listed = new Map(
  exampleLines.flatMap((line, index) => {
    const match = /^([A-Z][A-Z0-9_]*)=/.exec(line);
    return match?.[1] ? [[match[1], exampleLines[index - 1] ?? ''] as const] : [];
  }),
);

/** Every variable the environment schemas of the processes read. */
const schemaVariables = [
  ...Object.keys(AllInOneConfigSchema.shape),
  ...Object.keys(GatewayConfigSchema.shape),
  ...Object.keys(WorkerConfigSchema.shape),
  ...Object.keys(SimulatorEnvSchema.shape),
  ...[listenEnv({ port: 0 }), logEnv, databaseEnv, natsEnv, modelEnv, shutdownEnv, mcpEnv].flatMap(
    (piece) => Object.keys(piece),
  ),
];

/** Variables the operating system or Node provide, not chunklog's to document. */
const systemVariables = new Set(['PATH', 'HOME', 'NODE_ENV']);

/** Every variable the repository's own code reads from process.env by name (tests and tools too). */
function variablesReadInCode(): string[] {
  const names = new Set<string>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) {
        continue;
      }
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (/\.(ts|js|mjs|svelte)$/.test(entry.name)) {
        const text = readFileSync(path, 'utf8');
        for (const match of text.matchAll(/process\.env(?:\.|\[['"])([A-Z][A-Z0-9_]*)/g)) {
          if (match[1] && !systemVariables.has(match[1])) names.add(match[1]);
        }
      }
    }
  };
  for (const dir of ['packages', 'services', 'apps', 'bench', 'test']) visit(join(root, dir));
  return [...names];
}

describe('.env.example', () => {
  it('lists every variable an environment schema reads', () => {
    const missing = [...new Set(schemaVariables)].filter((name) => !listed.has(name));
    expect(missing, 'add these to .env.example, with their default and a comment').toEqual([]);
  });

  it('lists every variable the code reads from process.env', () => {
    const missing = variablesReadInCode().filter((name) => !listed.has(name));
    expect(missing, 'add these to .env.example, with their default and a comment').toEqual([]);
  });

  it('says what each variable is, in a comment line above it', () => {
    for (const [name, above] of listed) expect(above, name).toMatch(/^# \S/);
  });

  it('lists nothing that no process reads', () => {
    const read = new Set([...schemaVariables, ...variablesReadInCode()]);
    expect([...listed.keys()].filter((name) => !read.has(name))).toEqual([]);
  });
});
