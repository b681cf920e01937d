/**
 * `useChat` with ChunklogChatTransport in Debian's Chromium (playwright-core) against the
 * all-in-one product as `npm start` runs it (PGlite, in-process bus, the simulator as the
 * model): the page in test-app/ai-sdk-chat, bundled by Vite, served on the product's origin.
 * A reload mid-answer must go on where it stopped: the screen ends equal to the stored log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AllInOne, parseAllInOneConfig, startAllInOne } from '@chunklog/all-in-one';
import type { Chunk, Tab } from '@chunklog/chunk-core';
import { freePort, sleep } from '@chunklog/test-infra';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chromiumInstalled,
  chromiumPath,
  launchChromium,
  servePage,
} from '../../packages/client/src/testing/browser';

const packageRoot = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'packages',
  'client',
);
const appRoot = join(packageRoot, 'test-app', 'ai-sdk-chat');

if (!chromiumInstalled()) {
  console.warn(`\n!!! SKIPPED: the useChat browser test needs Chromium at ${chromiumPath}\n`);
}

describe.skipIf(!chromiumInstalled())('useChat over ChunklogChatTransport in a browser', () => {
  let product: AllInOne;
  let browser: Browser;
  let folder: string;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'chunklog-ai-sdk-'));
    const config = parseAllInOneConfig({
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      DATA_DIR: join(folder, 'data'),
    });
    [product] = await Promise.all([
      startAllInOne(config, { logger: pino({ level: 'silent' }) }),
      build({
        configFile: false,
        root: appRoot,
        base: '/ai-chat/',
        logLevel: 'warn',
        build: {
          outDir: join(folder, 'dist'),
          emptyOutDir: true,
          // React, the AI SDK and zod (chunk-core from source) in one test bundle.
          chunkSizeWarningLimit: 4000,
          rolldownOptions: {
            // swr's 'use client' marks a React Server Components boundary: nothing to keep here;
            // and a slow build on a busy machine is no news.
            onLog: (level, log, handler) => {
              if (log.code !== 'MODULE_LEVEL_DIRECTIVE' && log.code !== 'PLUGIN_TIMINGS') {
                handler(level, log);
              }
            },
          },
        },
      }),
    ]);
    browser = await launchChromium();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await product?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  async function api<T>(path: string, init?: RequestInit): Promise<T> {
    const response = await fetch(`${product.url}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json' },
    });
    return (await response.json()) as T;
  }

  /** A page on the product's origin whose /ai-chat/ is the built test app. */
  async function openChat(tabId: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await servePage(page, { origin: product.url, base: '/ai-chat/', folder: join(folder, 'dist') });
    await page.goto(`${product.url}/ai-chat/index.html#${tabId}`);
    await page.getByLabel('Message').waitFor();
    return { page, errors };
  }

  const assistantText = (page: Page) =>
    page.locator('[data-role=assistant] [data-testid=text]').allTextContents();

  it('streams an answer with a tool call, and a reload mid-answer goes on with each character once', async () => {
    const { tab } = await api<{ tab: Tab }>('/v1/tabs', {
      method: 'POST',
      body: JSON.stringify({ title: 'useChat' }),
    });
    const { page, errors } = await openChat(tab.id);
    const message =
      '[[sim: tool calculator {"expression":"6*7"}]] [[sim: words 300]] [[sim: rate 40]]';
    await page.getByLabel('Message').fill(message);
    await page.getByLabel('Message').press('Enter');

    // The tool call shows its input, then its output, before the answer streams in.
    const tool = page.locator('[data-testid=tool]');
    await expect
      .poll(() => tool.getAttribute('data-state'), { timeout: 30_000 })
      .toBe('output-available');
    expect(JSON.parse((await tool.getByTestId('tool-input').textContent()) ?? '')).toEqual({
      expression: '6*7',
    });
    const words = async () => (await assistantText(page)).join('').split(' ').length;
    await expect.poll(words, { timeout: 30_000, interval: 50 }).toBeGreaterThan(40);

    // Reload mid-answer: what the page showed, and the log's state, just before.
    const before = (await assistantText(page)).join('');
    await page.reload();
    const atReload = await api<{ tab: Tab }>(`/v1/tabs/${tab.id}`);
    expect(atReload.tab.status).toBe('running');
    await page.getByLabel('Message').waitFor();

    // The answer goes on streaming after the reload: every sample is a prefix of the end.
    const status = () => page.getByTestId('chat').getAttribute('data-status');
    await expect.poll(status, { timeout: 30_000, interval: 20 }).toMatch(/submitted|streaming/);
    const samples: string[] = [];
    while ((await status()) !== 'ready') {
      samples.push((await assistantText(page)).join(''));
      await sleep(100);
    }
    const tabDone = await waitIdle(tab.id);
    const { chunks } = await api<{ chunks: Chunk[] }>(`/v1/tabs/${tab.id}/chunks?limit=500`);
    const storedText = chunks
      .flatMap((chunk) =>
        chunk.type === 'text' && chunk.role === 'assistant' ? [chunk.data.text] : [],
      )
      .join('');
    const final = (await assistantText(page)).join('');
    expect(final).toBe(storedText);
    expect(final.split(' ')).toHaveLength(300);
    expect(final.startsWith(before)).toBe(true);
    for (const sample of samples) expect(final.startsWith(sample)).toBe(true);
    // It was still streaming after the reload: some sample shows part of the answer only.
    expect(
      samples.some((sample) => sample.length > before.length && sample.length < final.length),
    ).toBe(true);

    // One user message and one assistant message, the tool part with the stored result.
    const roles = await page
      .locator('[data-testid=message]')
      .evaluateAll((elements) => elements.map((element) => (element as HTMLElement).dataset.role));
    expect(roles).toEqual(['user', 'assistant']);
    expect(await page.locator('[data-role=user]').textContent()).toBe(message);
    const result = chunks.find((chunk) => chunk.type === 'tool_result');
    expect(result?.type === 'tool_result' && result.data.isError).toBe(false);
    expect(JSON.parse((await tool.getByTestId('tool-output').textContent()) ?? '')).toEqual(
      result?.type === 'tool_result' ? result.data.result : undefined,
    );
    expect(tabDone.lastSeq).toBe(chunks.at(-1)?.seq);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a call that waits for a person as an approval, across a reload, and goes on once approved', async () => {
    const { tab } = await api<{ tab: Tab }>('/v1/tabs', {
      method: 'POST',
      body: JSON.stringify({
        title: 'useChat approvals',
        config: { approval: { tools: ['calculator'] } },
      }),
    });
    const { page, errors } = await openChat(tab.id);
    await page.getByLabel('Message').fill('[[sim: tool calculator {"expression":"6*7"}]]');
    await page.getByLabel('Message').press('Enter');
    const tool = page.locator('[data-testid=tool]');
    await expect
      .poll(() => tool.getAttribute('data-state'), { timeout: 30_000 })
      .toBe('approval-requested');
    const status = () => page.getByTestId('chat').getAttribute('data-status');
    await expect.poll(status, { timeout: 10_000 }).toBe('ready');
    expect((await api<{ tab: Tab }>(`/v1/tabs/${tab.id}`)).tab.status).toBe('waiting');

    // A reload while it waits: the log gives the same part, with its buttons.
    await page.reload();
    await page.getByLabel('Message').waitFor();
    await expect
      .poll(() => tool.getAttribute('data-state'), { timeout: 10_000 })
      .toBe('approval-requested');
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => tool.getAttribute('data-state'), { timeout: 30_000 })
      .toBe('output-available');
    expect(JSON.parse((await tool.getByTestId('tool-output').textContent()) ?? '')).toEqual({
      value: 42,
    });
    await waitIdle(tab.id);
    await expect.poll(status, { timeout: 10_000 }).toBe('ready');
    const { chunks } = await api<{ chunks: Chunk[] }>(`/v1/tabs/${tab.id}/chunks?limit=500`);
    const decision = chunks.find((chunk) => chunk.type === 'approval_decision');
    expect(decision?.data).toMatchObject({ decision: 'approve' });
    // The answer after the result is in the same assistant message.
    const roles = await page
      .locator('[data-testid=message]')
      .evaluateAll((elements) => elements.map((element) => (element as HTMLElement).dataset.role));
    expect(roles).toEqual(['user', 'assistant']);
    const storedText = chunks
      .flatMap((chunk) =>
        chunk.type === 'text' && chunk.role === 'assistant' ? [chunk.data.text] : [],
      )
      .join('');
    expect(storedText).not.toBe('');
    await expect.poll(async () => (await assistantText(page)).join('')).toBe(storedText);
    expect(errors).toEqual([]);
    await page.close();
  });

  async function waitIdle(tabId: string): Promise<Tab> {
    for (;;) {
      const { tab } = await api<{ tab: Tab }>(`/v1/tabs/${tabId}`);
      if (tab.status === 'idle') return tab;
      await sleep(100);
    }
  }
});
