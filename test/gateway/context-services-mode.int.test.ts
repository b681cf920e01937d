/**
 * `GET /context` in the services mode: the real gateway entry (`main.ts`) as a child process,
 * with MODEL and MAX_TOKENS of its own, a worker on its own NATS connection running turns against
 * the simulator through the real SDK, and a remote tool served by a third connection.
 */
import { randomUUID } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import {
  createWorker,
  defineTool,
  serveRemoteTool,
  type ToolDefinition,
  type Worker,
} from '@chunklog/agent-worker';
import { createSimulator, type Simulator, validateRequest } from '@chunklog/anthropic-sim';
import { type Bus, createNatsBus } from '@chunklog/bus';
import { type ChunkStore, createPostgresStore } from '@chunklog/store';
import {
  createTestDatabase,
  freePort,
  type TestDatabase,
  testNatsUrl,
  testPostgresUrl,
  testSubjectPrefix,
} from '@chunklog/test-infra';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ServiceProcess, startServiceProcess, waitUntilReady } from '../e2e/service-process';

const [postgresUrl, natsUrl] = await Promise.all([testPostgresUrl(), testNatsUrl()]);

// The gateway's own defaults, unlike the worker's: /context shows whose it used.
const GATEWAY_MODEL = 'claude-gateway-default';
const GATEWAY_MAX_TOKENS = 1111;
const WORKER_MODEL = 'claude-sonnet-4-6';
const KEY = `ck_context_${randomUUID()}`;

type ContextBody = {
  request: {
    model: string;
    max_tokens: number;
    tools?: { name: string; cache_control?: unknown }[];
    messages: unknown[];
  };
  source?: string;
};

const lookupNoteTool = defineTool({
  name: 'lookup_note',
  description: 'Looks up a note by topic',
  inputSchema: z.object({ topic: z.string() }),
  // A schema of its own with `type` last: its bytes must reach /context unchanged.
  jsonSchema: { properties: { topic: { type: 'string' } }, required: ['topic'], type: 'object' },
  async run({ topic }) {
    return `The note on ${topic}: keep the prefix stable.`;
  },
}) as ToolDefinition<unknown>;

describe.skipIf(!postgresUrl || !natsUrl)('GET /v1/tabs/:tabId/context in services mode', () => {
  let database: TestDatabase;
  let store: ChunkStore;
  let simulator: Simulator;
  let gateway: ServiceProcess;
  let baseUrl: string;
  const subjectPrefix = testSubjectPrefix();
  const buses: Bus[] = [];
  let worker: Worker | undefined;
  let toolService: { stop(): Promise<void> } | undefined;

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${KEY}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  const contextOf = async (tabId: string) => {
    const response = await api('GET', `/v1/tabs/${tabId}/context`);
    expect(response.status).toBe(200);
    return response.body as ContextBody;
  };
  const newTab = async (config: Record<string, unknown>) => {
    const created = await api('POST', '/v1/tabs', { title: 'context', config });
    expect(created.status).toBe(201);
    return (created.body as { tab: { id: string } }).tab.id;
  };
  const natsBus = async () => {
    const bus = await createNatsBus({ servers: natsUrl!, subjectPrefix });
    buses.push(bus);
    return bus;
  };

  beforeAll(async () => {
    database = await createTestDatabase(postgresUrl!);
    store = createPostgresStore({ url: database.url });
    await store.migrate();
    simulator = await createSimulator({ logger: () => {} });
    const port = await freePort();
    gateway = startServiceProcess({
      name: 'gateway',
      entry: 'services/gateway/src/main.ts',
      environment: {
        DATABASE_URL: database.url,
        NATS_URL: natsUrl!,
        NATS_SUBJECT_PREFIX: subjectPrefix,
        PORT: String(port),
        HOST: '127.0.0.1',
        API_KEYS: `context-tenant-${subjectPrefix}:${KEY}`,
        MODEL: GATEWAY_MODEL,
        MAX_TOKENS: String(GATEWAY_MAX_TOKENS),
        LOG_LEVEL: 'warn',
      },
    });
    baseUrl = `http://127.0.0.1:${port}`;
    await waitUntilReady(gateway, baseUrl);
  });

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => console.info(`----- gateway -----\n${gateway?.output()}`));
  });

  afterAll(async () => {
    await worker?.stop();
    await toolService?.stop();
    await gateway?.stop('SIGTERM', 5_000);
    await Promise.allSettled(buses.map((bus) => bus.close()));
    await simulator?.close();
    await store?.close();
    await database?.drop();
  });

  it("falls back to the gateway's MODEL and MAX_TOKENS without tools when no worker answers, and says so", async () => {
    const tabId = await newTab({ system: 'Answer briefly.' });
    const { request, source } = await contextOf(tabId);
    expect(source).toBe('gateway-defaults');
    expect(request.model).toBe(GATEWAY_MODEL);
    expect(request.max_tokens).toBe(GATEWAY_MAX_TOKENS);
    expect(request.tools).toBeUndefined();
    await gateway.waitForOutput('no worker answered for /context', 10_000);
  });

  it('equals, byte for byte, the request the simulator receives for the step the worker runs', async () => {
    toolService = await serveRemoteTool(await natsBus(), lookupNoteTool);
    worker = createWorker({
      store,
      bus: await natsBus(),
      anthropic: new Anthropic({ apiKey: 'simulator', baseURL: simulator.url, maxRetries: 0 }),
      workerId: `context-worker-${randomUUID().slice(0, 8)}`,
      leaseMs: 5_000,
      maxSteps: 5,
      model: WORKER_MODEL,
      logger: pino({ level: 'silent' }),
      // A failed run leaves step 1 streaming: stop() should not wait long for it.
      stopTimeoutMs: 2_000,
    });
    await worker.start();
    const tabId = await newTab({ system: 'Answer briefly.' });
    // The worker has taken in the remote tool's announcement once /context offers it.
    await expect
      .poll(async () => (await contextOf(tabId)).request.tools?.map((tool) => tool.name), {
        timeout: 20_000,
        interval: 100,
      })
      .toContain('lookup_note');

    // Step 0 calls the remote tool; step 1 then streams a long answer slowly. While it streams
    // nothing seals, so the log stands exactly as the worker built step 1's request from it.
    const marker = `context-${randomUUID()}`;
    const accepted = await api('POST', `/v1/tabs/${tabId}/messages`, {
      text: `${marker} [[sim: tool lookup_note {"topic":"caching"}]] [[sim: words 4000]] [[sim: rate 20]]`,
    });
    expect(accepted.status).toBe(202);
    const stepOneRequest = () =>
      simulator.requests.find((received) => {
        const body = received.body as { messages?: unknown[] } | undefined;
        return JSON.stringify(body ?? null).includes(marker) && body?.messages?.length === 3;
      });
    await expect.poll(() => stepOneRequest() !== undefined, { timeout: 30_000 }).toBe(true);

    const context = await contextOf(tabId);
    // `stream` and `diagnostics` (the previous response's id) belong to the call, not the request
    // the log builds.
    const {
      stream: _stream,
      diagnostics,
      ...sent
    } = stepOneRequest()!.body as Record<string, unknown>;
    expect(diagnostics).toMatchObject({ previous_message_id: expect.stringMatching(/^msg_/) });
    expect(context.source).toBe('worker');
    expect(JSON.stringify(context.request)).toBe(JSON.stringify(sent));
    // The worker's settings and tools, not the gateway's.
    expect(context.request.model).toBe(WORKER_MODEL);
    expect(context.request.max_tokens).toBe(4096);
    const tools = context.request.tools ?? [];
    expect(tools.map((tool) => tool.name)).toEqual([
      'get_time',
      'calculator',
      'sleep',
      'task',
      'lookup_note',
    ]);
    expect(tools.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    expect(validateRequest(context.request)).toEqual([]);

    expect((await api('POST', `/v1/tabs/${tabId}/cancel`)).status).toBe(202);
    await expect
      .poll(
        async () =>
          ((await api('GET', `/v1/tabs/${tabId}`)).body as { tab: { status: string } }).tab.status,
        {
          timeout: 20_000,
          interval: 100,
        },
      )
      .toBe('idle');
  });
});
