/**
 * A deep tab in a real Chromium: scrolling to its first chunk pages the whole log in by seq,
 * the DOM stays the size of the viewport, and scrolling back to the end shows the tail again.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './support/browser';
import { renderedTexts } from './support/chat-page';
import { type Product, startProduct } from './support/product';
import { seededText, seedTabs } from './support/seed';

const DEPTH = 3000;

let product: Product;
let browser: Browser;
let tabId: string;
let longTurnId: string;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'chunklog-web-deep-'));
  let ids: string[];
  [ids, browser] = await Promise.all([
    seedTabs(dataDir, [
      { title: 'deep', depth: DEPTH },
      { title: 'one long turn', depth: 400, turnLength: 400 },
    ]),
    launchChromium(),
  ]);
  tabId = ids[0]!;
  longTurnId = ids[1]!;
  product = await startProduct({ dataDir });
});

afterAll(async () => {
  await browser?.close();
  await product?.stop();
});

const domNodes = (page: Page) => page.evaluate(() => document.getElementsByTagName('*').length);

/** The seqs of the text chunks on screen. */
async function seqsOnScreen(page: Page): Promise<number[]> {
  return (await renderedTexts(page)).map((chunk) => chunk.seq);
}

describe('a deep tab', () => {
  it('scrolls to seq 1 and back with a DOM that does not grow with history', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page.goto(`${product.url}/#/tabs/${tabId}`);
    await page.waitForSelector('[data-testid=connection]:has-text("Live")');
    await page.waitForSelector(`[data-seq="${DEPTH}"]`);
    const atTail = await domNodes(page);
    const tail = await renderedTexts(page);
    expect(tail.at(-1)).toEqual({ seq: DEPTH, text: seededText(DEPTH) });

    const viewport = page.getByRole('log', { name: 'Messages' });
    let peak = atTail;
    const deadline = Date.now() + 120_000;
    while (!(await seqsOnScreen(page)).includes(1)) {
      expect(Date.now()).toBeLessThan(deadline);
      await viewport.evaluate((element) => {
        element.scrollTop = 0;
      });
      await page.waitForTimeout(50);
      peak = Math.max(peak, await domNodes(page));
    }
    // At the top: the first chunks, in order, each once.
    const head = await renderedTexts(page);
    expect(head[0]).toEqual({ seq: 1, text: seededText(1) });
    const seqs = head.map((chunk) => chunk.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    // Rendered nodes depend on the viewport, not on the 3,000 chunks above or below it.
    expect(peak).toBeLessThan(atTail * 2);

    // Back to the end from the keyboard: the newer pages dropped on the way up come back.
    await viewport.focus();
    while (!(await seqsOnScreen(page)).includes(DEPTH)) {
      expect(Date.now()).toBeLessThan(deadline);
      await page.keyboard.press('End');
      await page.waitForTimeout(50);
      peak = Math.max(peak, await domNodes(page));
    }
    const back = await renderedTexts(page);
    expect(back.at(-1)).toEqual({ seq: DEPTH, text: seededText(DEPTH) });
    const backSeqs = back.map((chunk) => chunk.seq);
    expect(backSeqs).toEqual(backSeqs.map((_, index) => DEPTH - backSeqs.length + 1 + index));
    expect(peak).toBeLessThan(atTail * 2);
    // Following the live end again: a new message shows up at the bottom.
    await page.getByLabel('Message', { exact: true }).fill('[[sim: text "still live"]]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('text=still live');
    await page.close();
  });

  it('marks a turn that begins above the loaded window as partial until its start is paged in', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    // Older pages wait until the test lets them through, so the cut turn stays on screen.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(/\/chunks\?.*before=/, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${product.url}/#/tabs/${longTurnId}`);
    await page.waitForSelector('[data-seq="400"]');
    const viewport = page.getByRole('log', { name: 'Messages' });
    await viewport.evaluate((element) => {
      element.scrollTop = 0;
    });
    // The tail page holds the last 100 chunks of the 400-chunk turn: its first group is cut.
    const note = page.getByText('Earlier part of this turn is above');
    await note.waitFor();
    expect(await seqsOnScreen(page)).toContain(301);
    release();
    while (!(await seqsOnScreen(page)).includes(1)) {
      await viewport.evaluate((element) => {
        element.scrollTop = 0;
      });
      await page.waitForTimeout(50);
    }
    expect(await note.count()).toBe(0);
    await page.close();
  });
});
