import { randomUUID } from 'node:crypto';
import type { Chunk } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { maxChunkBytes } from '../request/max-chunk-bytes';
import { assertGapFree, useHarness } from '../testing/harness';
import { builtinTools } from '../tools/builtin-tools';
import { defineTool, type ToolDefinition } from '../tools/tool-registry';
import type { Worker } from '../worker';

/*
 * A single tool result larger than the whole context window (the simulator's `context-window`
 * directive in every message), driven through the worker with the real SDK.
 */
const window = 3_000;
const fileBytes = 60_000;
const endMarker = `END-OF-FILE-${randomUUID()}`;

/** A file far larger than the window: 20 times its tokens, its last line a marker. */
const readFileTool = defineTool({
  name: 'read_file',
  description: 'Returns the whole content of a file.',
  inputSchema: z.object({ path: z.string() }),
  async run({ path }) {
    const line = `${path}: 2026-12-01 12:00:00 INFO request served in 12 ms\n`;
    return `${line.repeat(Math.ceil(fileBytes / line.length))}${endMarker}`;
  },
}) as ToolDefinition<unknown>;

function message(marker: string, text: string): string {
  return `${marker} ${text} [[sim: context-window ${window}]]`;
}

describe('a tool result larger than the context window (worker, simulator through the SDK)', () => {
  let worker: Worker;
  const getHarness = useHarness('memory', async (harness) => {
    worker = await harness.startWorker({
      contextWindowTokens: window,
      compactionThreshold: 0.7,
      tools: [...builtinTools(), readFileTool],
    });
  });

  it('is sent cut with a note saying so, kept whole in the log, and the tab answers on', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab({ system: 'You read files and answer about them.' });
    const marker = `oversized-${randomUUID()}`;
    await harness.send(
      tab.id,
      message(marker, 'What does the log say? [[sim: tool read_file {"path":"server.log"}]]'),
    );
    await harness.turnsDone(tab.id, 1, 30_000);
    await harness.send(tab.id, message(marker, 'And in short? [[sim: words 10]]'));
    await harness.turnsDone(tab.id, 2, 30_000);

    const reasons = (harness.events.get(tab.id) ?? []).flatMap((event) =>
      event.event === 'turn-done' ? [event.data.reason] : [],
    );
    expect(reasons).toEqual(['completed', 'completed']);
    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    expect(log.filter((chunk) => chunk.type === 'error')).toEqual([]);
    // The log keeps the result whole.
    const result = log.find((chunk) => chunk.type === 'tool_result') as Extract<
      Chunk,
      { type: 'tool_result' }
    >;
    expect(String(result.data.result).length).toBeGreaterThan(fileBytes);
    expect(String(result.data.result).endsWith(endMarker)).toBe(true);

    // Every request was accepted; none carried the whole result, the steps after the call
    // carried its beginning and the note naming its size and seq.
    const requests = harness.requestsMentioning(marker);
    expect(requests.length).toBeGreaterThanOrEqual(3);
    expect(requests.filter((request) => request.status !== 200)).toEqual([]);
    for (const request of requests) expect(JSON.stringify(request.body)).not.toContain(endMarker);
    const afterCall = requests.filter((request) =>
      JSON.stringify(request.body).includes('server.log: 2026-12-01'),
    );
    expect(afterCall.length).toBeGreaterThanOrEqual(1);
    for (const request of afterCall) {
      expect(JSON.stringify(request.body)).toContain(
        `more than the model's context allows; only its beginning is shown above. The whole tool result is kept in the tab's log at seq ${result.seq}`,
      );
    }
    // The request the next step would send (what /context shows) cuts it the same way.
    const next = JSON.stringify(worker.nextRequest({ config: {}, log }));
    expect(next).not.toContain(endMarker);
    expect(next).toContain(`at seq ${result.seq}`);
    expect(next.length).toBeLessThan(maxChunkBytes(window) * 3);
  }, 60_000);
});
