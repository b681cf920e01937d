import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '..');

interface Service {
  command?: string[];
  image?: string;
  ports?: string[];
  deploy?: { replicas?: number };
  healthcheck?: { test?: string[]; start_period?: string };
  stop_grace_period?: string;
  environment?: Record<string, string>;
  restart?: string;
}

function composeFile(name: string): { services: Record<string, Service> } {
  return parse(readFileSync(join(root, name), 'utf8'), { merge: true });
}

const compose = composeFile('docker-compose.yml');
const cluster = composeFile('docker-compose.cluster.yml');
/** The processes `npm run build` bundles into dist/. */
const bundled = Object.keys(
  JSON.parse(readFileSync(join(root, 'scripts/entry-points.json'), 'utf8')) as Record<
    string,
    string
  >,
);
const seconds = (duration: string | undefined) => Number(/^(\d+)s$/.exec(duration ?? '')?.[1]);

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

  it('starts every chunklog container as `node dist/<process>.js`, a process the build bundles', () => {
    expect(chunklogServices.length).toBe(4);
    for (const [name, service] of chunklogServices) {
      const [node, file] = service.command ?? [];
      expect(node, name).toBe('node');
      const entry = /^dist\/([\w-]+)\.js$/.exec(file ?? '')?.[1];
      expect(bundled, `${name}: ${file}`).toContain(entry);
    }
  });

  it('checks the health of every long-running service, with a start period', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      if (name === 'migrate') continue;
      expect(service.healthcheck?.test, name).toBeDefined();
      expect(seconds(service.healthcheck?.start_period), name).toBeGreaterThan(0);
    }
    // Over TCP: the Unix socket answers while the first boot's temporary server runs.
    expect(compose.services.postgres?.healthcheck?.test?.join(' ')).toContain('-h 127.0.0.1');
  });

  it('gives the gateway and the workers more time to stop than their own shutdown takes', () => {
    for (const name of ['gateway', 'agent-worker']) {
      const service = compose.services[name]!;
      const shutdownMs = Number(service.environment?.SHUTDOWN_TIMEOUT_MS);
      expect(seconds(service.stop_grace_period) * 1_000, name).toBeGreaterThan(shutdownMs);
    }
  });

  it('publishes the gateway on loopback only, with no API key unless one is given', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's interpolation, not JavaScript's
    expect(compose.services.gateway?.ports).toEqual(['127.0.0.1:${GATEWAY_PORT:-8080}:8080']);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's interpolation, not JavaScript's
    expect(compose.services.gateway?.environment?.API_KEYS).toBe('${API_KEYS:-}');
    for (const service of Object.values(compose.services)) {
      for (const port of service.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);
    }
  });
});

describe('docker-compose.cluster.yml', () => {
  it('adds two NATS nodes, a second gateway and a third worker, the intake stream on three nodes', () => {
    expect(Object.keys(cluster.services).sort()).toEqual(
      ['agent-worker', 'gateway', 'gateway-2', 'nats', 'nats-2', 'nats-3'].sort(),
    );
    expect(cluster.services['agent-worker']?.deploy?.replicas).toBe(3);
    for (const name of ['gateway', 'gateway-2', 'agent-worker']) {
      expect(cluster.services[name]?.environment?.NATS_STREAM_REPLICAS, name).toBe('3');
      expect(cluster.services[name]?.environment?.NATS_URL?.split(','), name).toHaveLength(3);
    }
    for (const port of cluster.services['gateway-2']?.ports ?? [])
      expect(port).toMatch(/^127\.0\.0\.1:/);
  });
});
