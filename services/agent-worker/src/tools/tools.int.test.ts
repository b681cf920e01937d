import { createNatsBus } from '@chunklog/bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assertGapFree, createHarness, type Harness } from '../testing/harness';
import type { Worker } from '../worker';
import { serveRemoteTool } from './remote-tools';
import { defineTool, type ToolDefinition } from './tool-registry';

let harness: Harness | null;
let worker: Worker | undefined;
beforeAll(async () => {
  harness = await createHarness('nats');
  worker = await harness?.startWorker();
});

/** The tool names the worker would offer the model right now. */
const offeredNow = () =>
  (worker!.nextRequest({ config: {}, log: [] }).tools ?? []).map(
    (tool) => (tool as { name: string }).name,
  );
afterAll(async () => {
  await harness?.close();
});

type SentRequest = { tools?: { name: string; input_schema: unknown }[] };

const requestsMentioning = (text: string) => harness!.requestsMentioning(text);

const weatherTool = defineTool({
  name: 'weather',
  description: 'The forecast for a city',
  inputSchema: z.object({ city: z.string().min(1) }),
  async run({ city }) {
    if (city === 'Atlantis') throw new Error('No forecast for Atlantis');
    return { city, forecast: 'sunny' };
  },
}) as ToolDefinition<unknown>;

describe('remote tools over NATS', () => {
  it('offers a tool announced by another process, calls it by request/reply, and forgets it when withdrawn', async (context) => {
    if (!harness) return context.skip();
    const serviceBus = await createNatsBus({
      servers: harness.natsUrl!,
      subjectPrefix: harness.subjectPrefix!,
    });
    try {
      const service = await serveRemoteTool(serviceBus, weatherTool);
      // The announcement crosses NATS: wait until the worker has taken it in.
      await expect.poll(offeredNow, { timeout: 10_000, interval: 20 }).toContain('weather');

      const tab = await harness.newTab();
      await harness.send(tab.id, 'remote-call [[sim: tool weather {"city":"Oslo"}]]');
      await harness.send(
        tab.id,
        'remote-fail [[sim: tool weather {"city":"Atlantis"}]]',
        'enqueue',
      );
      await harness.turnsDone(tab.id, 2);
      const log = await harness.store.readAll(tab.id);
      assertGapFree(log);
      const results = log.flatMap((chunk) => (chunk.type === 'tool_result' ? [chunk.data] : []));
      expect(results).toEqual([
        expect.objectContaining({
          name: 'weather',
          result: { city: 'Oslo', forecast: 'sunny' },
          isError: false,
        }),
        expect.objectContaining({
          name: 'weather',
          result: 'No forecast for Atlantis',
          isError: true,
        }),
      ]);
      const offered = (requestsMentioning('remote-call')[0]!.body as SentRequest).tools!;
      expect(offered.find((tool) => tool.name === 'weather')?.input_schema).toMatchObject({
        type: 'object',
        properties: { city: { type: 'string', minLength: 1 } },
        required: ['city'],
      });

      await service.stop();
      await expect.poll(offeredNow, { timeout: 10_000, interval: 20 }).not.toContain('weather');
      const later = await harness.newTab();
      await harness.send(later.id, 'after-withdrawal [[sim: text "ok"]]');
      await harness.turnsDone(later.id, 1);
      const tools = (requestsMentioning('after-withdrawal')[0]!.body as SentRequest).tools!;
      expect(tools.map((tool) => tool.name)).not.toContain('weather');
      expect(tools.map((tool) => tool.name)).toContain('calculator');
    } finally {
      await serviceBus.close();
    }
  });
});

describe('the task tool', () => {
  /** A new tab's turn calling `task` with `taskInput` (JSON), once ended: its task result. */
  async function delegate(taskInput: string) {
    const tab = await harness!.newTab();
    await harness!.send(tab.id, `delegate [[sim: tool task ${taskInput}]]`);
    const log = await harness!.awaitTurnEnd(tab.id, 'completed');
    return { tab, result: log.find((chunk) => chunk.type === 'tool_result') };
  }

  it('runs a subagent in a child tab through the same log path and returns its answer', async (context) => {
    if (!harness) return context.skip();
    const { tab, result } = await delegate(
      '{"prompt":"subtask-prompt [[sim: text \\"the sub answer\\"]]","title":"sub"}',
    );
    expect(result?.type === 'tool_result' && result.data.isError).toBe(false);
    const answer =
      result?.type === 'tool_result'
        ? (result.data.result as { childTabId: string; answer: string })
        : null;
    expect(answer?.answer).toBe('the sub answer');

    const childTab = await harness.store.getTab(answer!.childTabId);
    expect(childTab.parentTabId).toBe(tab.id);
    expect(childTab.status).toBe('idle');
    const childLog = await harness.store.readAll(childTab.id);
    assertGapFree(childLog);
    expect(childLog.map((chunk) => `${chunk.role}/${chunk.type}`)).toEqual([
      'user/text',
      'assistant/text',
    ]);
    // The child's turn streamed on its own tab's subjects like any turn.
    const childEvents = harness.events.get(childTab.id) ?? [];
    expect(childEvents.map((event) => event.event)).toContain('turn-done');
    // The subagent is not offered `task` again (no unbounded recursion).
    const childRequest = requestsMentioning('subtask-prompt').find(
      (request) => !JSON.stringify(request.body).includes('delegate'),
    );
    expect((childRequest!.body as SentRequest).tools!.map((tool) => tool.name)).not.toContain(
      'task',
    );
  });

  it('refuses to run `task` in a subagent whose model calls it unoffered', async (context) => {
    if (!harness) return context.skip();
    const { result } = await delegate(
      '{"prompt":"nested-prompt [[sim: tool task {\\"prompt\\":\\"grandchild\\"}]]","title":"sub"}',
    );
    const childTabId =
      result?.type === 'tool_result'
        ? (result.data.result as { childTabId: string }).childTabId
        : undefined;
    const childLog = await harness.store.readAll(childTabId!);
    // The call is answered with an error, as for any tool the turn does not have.
    const refused = childLog.find((chunk) => chunk.type === 'tool_result');
    expect(refused?.type === 'tool_result' && refused.data).toMatchObject({
      name: 'task',
      isError: true,
      result: 'Unknown tool: task',
    });
    // No grandchild tab: the subagent did not delegate again.
    const { tabs } = await harness.store.listTabs(harness.tenantId, { limit: 500 });
    expect(tabs.filter((candidate) => candidate.parentTabId === childTabId)).toEqual([]);
  });
});
