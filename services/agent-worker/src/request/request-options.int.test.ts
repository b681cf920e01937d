import { type Bus, createNatsBus, NoRespondersError } from '@chunklog/bus';
import {
  buildRequest,
  InvalidInputError,
  REQUEST_OPTIONS_SUBJECT,
  type RequestOptionsQuery,
  RequestOptionsReplySchema,
  type TabConfig,
} from '@chunklog/chunk-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHarness, type Harness } from '../testing/harness';
import { serveRemoteTool } from '../tools/remote-tools';
import { defineTool, type ToolDefinition } from '../tools/tool-registry';
import type { Worker } from '../worker';

let harness: Harness | null;
let workers: Worker[] = [];
let serviceBus: Bus | undefined;
let service: { stop(): Promise<void> } | undefined;

const weatherTool = defineTool({
  name: 'weather',
  description: 'The forecast for a city',
  inputSchema: z.object({ city: z.string().min(1), days: z.number().int().optional() }),
  // Its own JSON schema, `type` last: the options must carry it in this order, byte for byte.
  jsonSchema: {
    properties: { city: { type: 'string', minLength: 1 }, days: { type: 'integer' } },
    required: ['city'],
    type: 'object',
  },
  async run({ city }) {
    return { city, forecast: 'sunny' };
  },
}) as ToolDefinition<unknown>;

beforeAll(async () => {
  harness = await createHarness('nats');
  if (!harness) return;
  // Two workers in one queue group, and the tool on a connection of its own (a tool service).
  workers = [await harness.startWorker(), await harness.startWorker()];
  serviceBus = await createNatsBus({
    servers: harness.natsUrl!,
    subjectPrefix: harness.subjectPrefix!,
  });
  service = await serveRemoteTool(serviceBus, weatherTool);
});
afterAll(async () => {
  await service?.stop();
  await serviceBus?.close();
  await harness?.close();
});

/** What the gateway's `/context` asks: the options any worker would build the tab's step from. */
async function askOptions(tabId: string, config: TabConfig) {
  const query: RequestOptionsQuery = { tabId, config };
  const reply = await harness!.bus.request(REQUEST_OPTIONS_SUBJECT, query, { timeoutMs: 5_000 });
  return RequestOptionsReplySchema.parse(reply).options;
}

describe('REQUEST_OPTIONS_SUBJECT (what /context asks the workers)', () => {
  it("answers with the tab's settings over the worker's defaults and the tools it offers, remote ones included", async (context) => {
    if (!harness) return context.skip();
    const tab = await harness.newTab();
    // The announcement crosses NATS: wait until the answering worker offers the remote tool.
    await expect
      .poll(async () => (await askOptions(tab.id, {})).tools.map((tool) => tool.name), {
        timeout: 10_000,
        interval: 50,
      })
      .toContain('weather');
    const all = await askOptions(tab.id, {});
    expect(all).toMatchObject({ model: 'claude-sonnet-4-6', maxTokens: 4096 });
    expect(all.tools.map((tool) => tool.name)).toEqual([
      'get_time',
      'calculator',
      'sleep',
      'task',
      'weather',
    ]);

    const config: TabConfig = {
      model: 'claude-tab-model',
      system: 'Be brief.',
      thinking: { budgetTokens: 6000 },
      tools: ['weather', 'calculator'],
    };
    const options = await askOptions(tab.id, config);
    expect(options).toMatchObject({
      model: 'claude-tab-model',
      // No maxTokens on the tab: the worker's 4096, raised to the budget + 1024.
      maxTokens: 7024,
      system: 'Be brief.',
      thinking: { budgetTokens: 6000 },
    });
    expect(options.tools.map((tool) => tool.name)).toEqual(['calculator', 'weather']);
  });

  it('builds, from any log, byte for byte the request the worker itself would send', async (context) => {
    if (!harness) return context.skip();
    const config: TabConfig = { system: 'Answer in one line.' };
    const tab = await harness.newTab(config);
    await harness.send(tab.id, 'options-turn [[sim: tool weather {"city":"Oslo","days":2}]]');
    await harness.turnsDone(tab.id, 1);
    const log = await harness.store.readAll(tab.id);
    expect(log.some((chunk) => chunk.type === 'tool_result')).toBe(true);

    const options = await askOptions(tab.id, config);
    const built = JSON.stringify(buildRequest({ chunks: log, ...options }));
    // The same for both workers, and the same bytes as the step request: the tool JSON crosses
    // the bus and the reply schema in its own key order (the weather schema's `type` last).
    for (const worker of workers) {
      expect(built).toBe(JSON.stringify(worker.nextRequest({ config, log })));
    }
    const sent = harness.requestsMentioning('options-turn').at(-1)!.body as { tools: unknown[] };
    expect(JSON.stringify(options.tools)).toBe(JSON.stringify(sent.tools.map(withoutCacheControl)));
  });

  it('refuses a malformed query as invalid input', async (context) => {
    if (!harness) return context.skip();
    await expect(
      harness.bus.request(REQUEST_OPTIONS_SUBJECT, { config: {} }, { timeoutMs: 5_000 }),
    ).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('has no responders once every worker has stopped', async (context) => {
    if (!harness) return context.skip();
    const tab = await harness.newTab();
    for (const worker of workers) await worker.stop();
    await expect(askOptions(tab.id, {})).rejects.toBeInstanceOf(NoRespondersError);
  });
});

function withoutCacheControl(tool: unknown): unknown {
  const { cache_control: _marker, ...rest } = tool as Record<string, unknown>;
  return rest;
}
