/** What the browser tests do and read through the app's own screen, and the stored log they check it against. */
import type { Chunk, Tab } from '@chunklog/chunk-core';
import { sleep } from '@chunklog/test-infra';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

export type RenderedText = { seq: number; text: string };

/** Whitespace is layout (Markdown paragraphs), not content: compared without it. */
export const squash = (text: string) => text.replace(/\s+/g, '');

export async function createTabInPage(
  page: Page,
  title: string,
  options: { thinking?: boolean } = {},
): Promise<string> {
  await page.fill('#new-tab-title', title);
  if (options.thinking) await page.check('text=Thinking');
  await page.click('button:has-text("New tab")');
  await page.waitForFunction(() => /^#\/tabs\//.test(location.hash));
  await page.waitForSelector('[data-testid=connection]:has-text("Live")');
  return page.evaluate(() => location.hash.slice('#/tabs/'.length));
}

export async function sendInPage(page: Page, text: string): Promise<void> {
  await page.fill('#composer-text', text);
  await page.keyboard.press('Enter');
}

/** The sealed text chunks on screen, in order. */
export function renderedTexts(page: Page): Promise<RenderedText[]> {
  return page.$$eval('[data-testid=text]', (elements) =>
    elements.map((element) => ({
      seq: Number((element as HTMLElement).dataset.seq),
      text: (element.textContent ?? '').trim(),
    })),
  );
}

/** The streaming block's text, or null when none is open. */
export function openText(page: Page): Promise<string | null> {
  return page.evaluate(
    () => document.querySelector('[data-testid=open-text]')?.textContent ?? null,
  );
}

export class ApiReader {
  constructor(
    readonly url: string,
    readonly headers: Record<string, string> = {},
  ) {}

  async tab(tabId: string): Promise<Tab> {
    const response = await fetch(`${this.url}/v1/tabs/${tabId}`, { headers: this.headers });
    return ((await response.json()) as { tab: Tab }).tab;
  }

  /** The whole stored log (tests keep their tabs under a page of 500). */
  async chunks(tabId: string): Promise<Chunk[]> {
    const response = await fetch(`${this.url}/v1/tabs/${tabId}/chunks?limit=500`, {
      headers: this.headers,
    });
    return ((await response.json()) as { chunks: Chunk[] }).chunks;
  }

  async textChunks(tabId: string): Promise<RenderedText[]> {
    return (await this.chunks(tabId)).flatMap((chunk) =>
      chunk.type === 'text' ? [{ seq: chunk.seq, text: chunk.data.text }] : [],
    );
  }

  /** Waits until the tab is idle with at least `minSeq` chunks. */
  async idle(tabId: string, minSeq = 1, timeoutMs = 60_000): Promise<Tab> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const tab = await this.tab(tabId);
      if (tab.status === 'idle' && tab.lastSeq >= minSeq) return tab;
      if (Date.now() > deadline) throw new Error(`tab ${tabId} not idle: ${JSON.stringify(tab)}`);
      await sleep(100);
    }
  }
}

/**
 * Samples the streaming block every 50 ms until it seals, while `during` runs; returns the
 * samples. Each is what the screen showed at that moment.
 */
export async function sampleOpenText(page: Page, timeoutMs = 60_000): Promise<string[]> {
  const samples: string[] = [];
  const deadline = Date.now() + timeoutMs;
  await page.waitForSelector('[data-testid=open-text]', { timeout: timeoutMs });
  for (;;) {
    const text = await openText(page).catch(() => null);
    if (text === null) return samples;
    samples.push(text);
    if (Date.now() > deadline) throw new Error('the open block did not seal');
    await sleep(50);
  }
}

/** Waits until a block streams with more than `length` characters on screen. */
export async function waitForOpenText(page: Page, length: number): Promise<void> {
  await page.waitForFunction(
    (min) => (document.querySelector('[data-testid=open-text]')?.textContent?.length ?? 0) > min,
    length,
  );
}

/**
 * Once the tab is idle, the screen and the log agree: the same text chunks, by seq, with the
 * same characters. Returns the stored text chunks.
 */
export async function expectScreenToEqualLog(
  page: Page,
  api: ApiReader,
  tabId: string,
): Promise<RenderedText[]> {
  await api.idle(tabId, 2);
  const stored = await api.textChunks(tabId);
  await page.waitForFunction(
    (count) => document.querySelectorAll('[data-testid=text]').length === count,
    stored.length,
  );
  const squashed = (texts: RenderedText[]) =>
    texts.map((chunk) => ({ seq: chunk.seq, text: squash(chunk.text) }));
  expect(squashed(await renderedTexts(page))).toEqual(squashed(stored));
  return stored;
}
