import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import entryPoints from '../scripts/entry-points.json';

const root = join(import.meta.dirname, '..');
const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<
  string,
  string
>;
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { command?: string[]; image?: string; deploy?: { replicas?: number } }>;
};

/**
 * The source file a script runs, `tsx <file>` or the bundle `node dist/<name>.js` built from it
 * (scripts/entry-points.json), so the test can check it exists.
 */
function scriptEntry(script: string): string | null {
  // `exec` hands the shell's process over to node, so a SIGTERM to npm reaches the service.
  const source = /^(?:exec )?tsx (\S+\.ts)$/.exec(script)?.[1];
  if (source) return source;
  const bundle = /^(?:exec )?node dist\/([\w-]+)\.js$/.exec(script)?.[1];
  return bundle ? ((entryPoints as Record<string, string>)[bundle] ?? null) : null;
}

describe('docker-compose.yml', () => {
  const chunklogServices = Object.entries(compose.services).filter(
    ([, service]) => service.image === 'chunklog:local',
  );

  it('runs the services the design names, with two workers', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['agent-worker', 'gateway', 'migrate', 'nats', 'postgres', 'sim'].sort(),
    );
    expect(compose.services['agent-worker']?.deploy?.replicas).toBe(2);
  });

  it('starts every chunklog container with an npm script that exists and runs an existing file', () => {
    expect(chunklogServices.length).toBe(4);
    for (const [name, service] of chunklogServices) {
      const [npm, run, script] = service.command ?? [];
      expect([npm, run], name).toEqual(['npm', 'run']);
      const body = scripts[script ?? ''];
      expect(body, `${name}: npm script ${script}`).toBeDefined();
      const entry = scriptEntry(body ?? '');
      expect(entry, `${name}: ${body}`).not.toBeNull();
      expect(existsSync(join(root, entry ?? '')), `${name}: ${entry}`).toBe(true);
    }
  });
});
