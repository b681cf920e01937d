import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseExposition, startWebhookReceiver } from '@chunklog/agent-worker/testing';
import { ChunkPageSchema, TabSchema } from '@chunklog/chunk-core';
import { EventSource } from 'eventsource';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllInOneConfig } from './all-in-one-config';
import { type AllInOne, startAllInOne } from './start-all-in-one';

const dataDir = mkdtempSync(join(tmpdir(), 'chunklog-all-in-one-'));
// A model other than the gateway's default, so /context shows whose settings it used.
const config = parseAllInOneConfig({
  DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'silent',
  MODEL: 'claude-haiku-4-5',
  // The webhook receiver below listens on loopback, which only an allowlist opens.
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1/32',
});
let running: AllInOne | null = null;

afterAll(async () => {
  await running?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function json(url: string, init?: RequestInit): Promise<unknown> {
  const response = await fetch(url, {
    ...init,
    headers: { 'content-type': 'application/json', ...init?.headers },
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return response.json();
}

/**
 * Opens the tab's SSE stream; resolves once it is open (live from then on) with a promise of
 * every event name seen until `turn-done`.
 */
function openEvents(url: string): Promise<{ untilTurnDone: Promise<string[]> }> {
  return new Promise((resolveOpen, rejectOpen) => {
    const source = new EventSource(url);
    const seen: string[] = [];
    let opened = false;
    const untilTurnDone = new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        source.close();
        const error = new Error(`no turn-done; saw ${seen.join(', ')}`);
        if (opened) reject(error);
        else rejectOpen(error);
      }, 30_000);
      for (const name of ['turn-start', 'chunk-open', 'chunk-delta', 'chunk-seal', 'turn-done']) {
        source.addEventListener(name, () => {
          seen.push(name);
          if (name === 'turn-done') {
            clearTimeout(timer);
            source.close();
            resolve(seen);
          }
        });
      }
    });
    source.addEventListener('open', () => {
      opened = true;
      resolveOpen({ untilTurnDone });
    });
  });
}

describe('npm start (the all-in-one process)', () => {
  it('runs a turn end to end on PGlite, the in-process bus and the simulator, and keeps data across a restart', async () => {
    running = await startAllInOne(config);
    expect(running.authOff).toBe(true);
    expect(running.simulatorUrl).not.toBeNull();
    const { tab } = (await json(`${running.url}/v1/tabs`, {
      method: 'POST',
      body: JSON.stringify({ title: 'first' }),
    })) as { tab: { id: string } };

    // Open before the message is sent: a stream that joined late would see only the seals.
    const events = await openEvents(`${running.url}/v1/tabs/${tab.id}/events`);
    const { chunkId } = (await json(`${running.url}/v1/tabs/${tab.id}/messages`, {
      method: 'POST',
      body: JSON.stringify({ text: 'Hello there [[sim: words 12]]' }),
    })) as { chunkId: string };
    const seen = await events.untilTurnDone;
    expect(seen[0]).toBe('turn-start');
    expect(seen).toContain('chunk-seal');
    expect(seen).toContain('chunk-delta');
    expect(seen.indexOf('chunk-open')).toBeGreaterThan(0);

    // /context is the worker's own next request: its model and its tools, not a guess.
    const { request, source } = (await json(`${running.url}/v1/tabs/${tab.id}/context`)) as {
      request: { model: string; tools?: { name: string }[] };
      source: string;
    };
    expect(source).toBe('worker');
    expect(request.model).toBe(config.MODEL);
    expect(request.tools?.map((tool) => tool.name)).toContain('task');

    const before = ChunkPageSchema.parse(await json(`${running.url}/v1/tabs/${tab.id}/chunks`));
    expect(before.chunks[0]?.id).toBe(chunkId);
    expect(before.chunks.map((chunk) => chunk.seq)).toEqual(
      before.chunks.map((_, index) => index + 1),
    );
    expect(before.chunks.some((chunk) => chunk.role === 'assistant')).toBe(true);

    // The worker's figures share the gateway's /metrics: one append (at least) per chunk.
    const metrics = await fetch(`${running.url}/metrics`);
    expect(metrics.status).toBe(200);
    const series = parseExposition(await metrics.text());
    expect(series.get('chunklog_worker_append_seconds_count')).toBeGreaterThanOrEqual(
      before.chunks.length,
    );
    expect(series.get('chunklog_worker_chunks_appended_total')).toBe(before.chunks.length);
    expect(series.get('chunklog_store_append_batch_size_sum')).toBe(
      series.get('chunklog_worker_append_seconds_count'),
    );
    expect(series.get('chunklog_worker_turns_total{reason="completed"}')).toBe(1);
    // Turns are counted where they run (the worker), once; the gateway does not count them again.
    expect([...series.keys()].some((name) => name.startsWith('chunklog_turns_total'))).toBe(false);
    // Process metrics once, for the process, not once per service it hosts.
    expect(series.get(`chunklog_build_info{version="0.1.0",node="${process.version}"}`)).toBe(1);
    expect(series.get('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);

    await running.close();
    running = await startAllInOne(config);
    const after = ChunkPageSchema.parse(await json(`${running.url}/v1/tabs/${tab.id}/chunks`));
    expect(after).toEqual(before);
    const reread = (await json(`${running.url}/v1/tabs/${tab.id}`)) as { tab: unknown };
    expect(TabSchema.parse(reread.tab).status).toBe('idle');
  });

  it('refuses a second start on a DATA_DIR in use, before opening it, and the first keeps serving', async () => {
    running ??= await startAllInOne(config);
    const { tab } = (await json(`${running.url}/v1/tabs`, {
      method: 'POST',
      body: JSON.stringify({ title: 'kept' }),
    })) as { tab: { id: string } };
    // Two PGlite processes on one folder each see only their own writes: one would lose data.
    await expect(startAllInOne(config)).rejects.toThrow(/DATA_DIR .* in use/);
    const reread = (await json(`${running.url}/v1/tabs/${tab.id}`)) as { tab: unknown };
    expect(TabSchema.parse(reread.tab).title).toBe('kept');
  });

  it("sends a turn's end to a webhook endpoint, signed, from the worker in the process", async () => {
    running ??= await startAllInOne(config);
    const receiver = await startWebhookReceiver(() => 204);
    try {
      const { endpoint, secret } = (await json(`${running.url}/v1/webhooks`, {
        method: 'POST',
        body: JSON.stringify({ url: receiver.url, eventTypes: ['turn.completed'] }),
      })) as { endpoint: { id: string }; secret: string };
      const { tab } = (await json(`${running.url}/v1/tabs`, {
        method: 'POST',
        body: JSON.stringify({ title: 'hooked' }),
      })) as { tab: { id: string } };
      await json(`${running.url}/v1/tabs/${tab.id}/messages`, {
        method: 'POST',
        body: JSON.stringify({ text: 'Hi [[sim: words 3]]' }),
      });
      const request = await receiver.request(1);
      const event = new Webhook(secret).verify(
        request.body,
        request.headers as Record<string, string>,
      );
      expect(event).toMatchObject({ type: 'turn.completed', data: { tabId: tab.id } });
      let deliveries: { status: string }[] = [];
      for (let poll = 0; deliveries[0]?.status !== 'delivered' && poll < 100; poll++) {
        if (poll > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        ({ deliveries } = (await json(`${running.url}/v1/webhooks/${endpoint.id}/deliveries`)) as {
          deliveries: { status: string }[];
        });
      }
      expect(deliveries).toMatchObject([{ status: 'delivered', attempts: 1, lastStatusCode: 204 }]);
    } finally {
      await receiver.close();
    }
    // Alone (-t), this case boots PGlite itself: more than the default minute on a loaded machine.
  }, 180_000);

  it('refuses to serve a non-loopback address without API keys', async () => {
    const exposed = parseAllInOneConfig({ DATA_DIR: dataDir, HOST: '0.0.0.0', PORT: '0' });
    await expect(startAllInOne(exposed)).rejects.toThrow(/without auth/);
  });
});
