/** Starts a gateway on a real port with two tenants, and speaks HTTP to it like a client. */
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { createGateway, type GatewayOptions } from '../create-gateway';
import type { Backend, BackendFactory } from './test-backends';

export interface TestTenant {
  id: string;
  key: string;
}

export interface JsonResponse {
  status: number;
  body: unknown;
  headers: Headers;
}

export interface GatewayHarness {
  app: FastifyInstance;
  backend: Backend;
  baseUrl: string;
  tenantA: TestTenant;
  tenantB: TestTenant;
  request(
    method: string,
    path: string,
    options?: {
      key?: string | null;
      body?: unknown;
      rawBody?: string;
      headers?: Record<string, string>;
    },
  ): Promise<JsonResponse>;
  /** Creates a tab of tenant A (or the given tenant) and returns its id. */
  createTab(tenant?: TestTenant): Promise<string>;
  close(): Promise<void>;
}

export async function startGateway(
  factory: BackendFactory,
  overrides: Partial<GatewayOptions> = {},
  /** Another harness's store and bus, for a second gateway on the same backend. */
  shared?: Backend,
): Promise<GatewayHarness> {
  const backend = shared ?? (await factory.create());
  const tenants: TestTenant[] = [];
  for (const name of ['tenant-a', 'tenant-b']) {
    const tenant = await backend.store.createTenant({ name });
    const key = `ck_${name}_${crypto.randomUUID()}`;
    await backend.store.addApiKey(tenant.id, key);
    tenants.push({ id: tenant.id, key });
  }
  const app = await createGateway({
    store: backend.store,
    bus: backend.bus,
    auth: { mode: 'keys' },
    ticketSecret: 'test-ticket-secret-0123456789',
    // GATEWAY_TEST_LOG=warn shows the gateway's own logs while debugging a suite.
    ...(process.env.GATEWAY_TEST_LOG
      ? { logger: pino({ level: process.env.GATEWAY_TEST_LOG }) }
      : {}),
    ...overrides,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const [tenantA, tenantB] = tenants as [TestTenant, TestTenant];

  const harness: GatewayHarness = {
    app,
    backend,
    baseUrl,
    tenantA,
    tenantB,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const key = options.key === undefined ? tenantA.key : options.key;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      let body: string | undefined;
      if (options.rawBody !== undefined) body = options.rawBody;
      else if (options.body !== undefined) body = JSON.stringify(options.body);
      if (body !== undefined) headers['content-type'] ??= 'application/json';
      const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {}
      return { status: response.status, body: parsed, headers: response.headers };
    },
    async createTab(tenant = tenantA) {
      const response = await harness.request('POST', '/v1/tabs', {
        key: tenant.key,
        body: { title: 'test' },
      });
      if (response.status !== 201) throw new Error(`createTab: ${response.status}`);
      return (response.body as { tab: { id: string } }).tab.id;
    },
    async close() {
      await app.close();
      if (!shared) await backend.cleanup();
    },
  };
  return harness;
}
