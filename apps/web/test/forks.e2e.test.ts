/**
 * Edit a message, regenerate an answer and switch between the versions, in a real Chromium
 * against `npm start`: each makes a fork (a new tab sharing the history before the message),
 * opens it, leaves the original untouched, and what the page shows is what the logs hold.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/a11y';
import {
  createTabInPage,
  expectScreenToEqualLog,
  renderedTexts,
  sendInPage,
} from './support/chat-page';
import { useProductInChromium } from './support/product-in-chromium';

const app = useProductInChromium();
let context: BrowserContext;
let page: Page;

beforeEach(async () => {
  context = await app.browser.newContext({ viewport: { width: 1200, height: 800 } });
  page = await context.newPage();
  await page.goto(app.product.url);
});

afterEach(async () => {
  await context.close();
});

/** The tab the URL names. */
const openTabId = () => page.evaluate(() => location.hash.slice('#/tabs/'.length));

/** Waits until the page opens a tab other than `tabId`; returns its id. */
async function nextTab(tabId: string): Promise<string> {
  await page.waitForFunction(
    (previous) => /^#\/tabs\//.test(location.hash) && !location.hash.endsWith(previous),
    tabId,
  );
  return openTabId();
}

/** Asks in the page and waits until the answer is stored and shown. */
async function ask(tabId: string, text: string, lastSeq: number): Promise<void> {
  await sendInPage(page, text);
  await app.api.idle(tabId, lastSeq);
  await expectScreenToEqualLog(page, app.api, tabId);
}

const versions = () => page.getByRole('group', { name: 'Versions of this message' });
const position = () => versions().getByTestId('version-position').textContent();
const focused = () =>
  page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    return element ? `${element.tagName} ${element.getAttribute('aria-label') ?? ''}`.trim() : '';
  });

describe('editing a message', () => {
  it('opens a fork with the history before it and the new text answered, the old tab untouched', async () => {
    const tabId = await createTabInPage(page, 'edits');
    await ask(tabId, 'First? [[sim: text "One."]]', 2);
    await ask(tabId, 'Second? [[sim: text "Two."]]', 4);
    const before = await app.api.chunks(tabId);

    const edits = page.getByRole('button', { name: 'Edit message' });
    expect(await edits.count()).toBe(2);
    await edits.nth(1).click();
    const field = page.getByLabel('Edit your message');
    expect(await field.inputValue()).toBe('Second? [[sim: text "Two."]]');
    expect(await focused()).toBe('TEXTAREA');
    // Escape gives up: the text is unchanged and focus is back on the pencil.
    await page.keyboard.press('Escape');
    await field.waitFor({ state: 'detached' });
    expect(await focused()).toBe('BUTTON Edit message');

    await edits.nth(1).click();
    const typed = 'Second, <b>edited</b>  &amp; kept? [[sim: text "Two, again."]]';
    await field.fill(typed);
    await page.keyboard.press('Control+Enter');
    const forkId = await nextTab(tabId);
    const fork = await app.api.tab(forkId);
    expect(fork).toMatchObject({ forkOf: tabId, forkSeq: 2 });
    await app.api.idle(forkId, 4);
    const shown = await expectScreenToEqualLog(page, app.api, forkId);
    expect(shown.map((chunk) => chunk.text)).toEqual([
      'First? [[sim: text "One."]]',
      'One.',
      typed,
      'Two, again.',
    ]);
    // The user's text as typed, not as HTML; the history before it is the parent's chunks.
    const edited = page.locator('[data-testid=text][data-seq="3"]');
    expect(await edited.textContent()).toBe(typed);
    expect(await page.locator('[data-testid=text] b').count()).toBe(0);
    const ids = await page.$$eval('[data-testid=text]', (elements) =>
      elements.map((element) => (element as HTMLElement).dataset.chunkId),
    );
    expect(ids.slice(0, 2)).toEqual(before.slice(0, 2).map((chunk) => chunk.id));
    expect(await focused()).toBe('H1');

    // The versions of the message: the original first, this one second.
    expect(await position()).toBe('2/2');
    expect(await versions().textContent()).toContain('Version 2 of 2');
    // A branch hint in the tab list; the original tab's log is as it was.
    const listed = page.getByRole('navigation', { name: 'Your tabs' }).getByRole('button');
    expect(await listed.filter({ hasText: 'branch' }).count()).toBe(1);
    expect(await app.api.chunks(tabId)).toEqual(before);

    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      expect(await seriousViolations(page, `fork (${colorScheme})`)).toEqual([]);
    }
    await shoot('fork-versions');
    await page.getByRole('button', { name: 'Edit message' }).nth(1).click();
    await shoot('fork-editing');
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      expect(await seriousViolations(page, `editing (${colorScheme})`)).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: null });
  });
});

describe('regenerating an answer and switching versions', () => {
  it('opens a fork with the same question answered again, and switches back and forth with ‹ ›', async () => {
    const tabId = await createTabInPage(page, 'regenerate');
    await ask(tabId, 'Weather? [[sim: words 12]]', 2);
    const parentLog = await app.api.chunks(tabId);

    await page.getByRole('button', { name: 'Regenerate answer' }).click();
    const forkId = await nextTab(tabId);
    expect(await app.api.tab(forkId)).toMatchObject({ forkOf: tabId, forkSeq: 0 });
    await app.api.idle(forkId, 2);
    const shown = await expectScreenToEqualLog(page, app.api, forkId);
    // The same question, answered anew: chunks of the fork's own, not the parent's.
    expect(shown.map((chunk) => chunk.text)).toEqual(
      parentLog.flatMap((chunk) => (chunk.type === 'text' ? [chunk.data.text] : [])),
    );
    const forkLog = await app.api.chunks(forkId);
    const forkIds = forkLog.map((chunk) => chunk.id);
    for (const chunk of parentLog) expect(forkIds).not.toContain(chunk.id);
    const screenIds = await page.$$eval('[data-testid=text]', (elements) =>
      elements.map((element) => (element as HTMLElement).dataset.chunkId),
    );
    expect(screenIds).toEqual(
      forkLog.filter((chunk) => chunk.type === 'text').map((chunk) => chunk.id),
    );
    expect(await position()).toBe('2/2');

    // ‹ opens the original, focus on the switcher (its › as ‹ is at the end), with no frame
    // between the two without messages (they share the question); › comes back.
    await countEmptyFrames();
    await versions().getByRole('button', { name: 'Previous version' }).click();
    expect(await nextTab(forkId)).toBe(tabId);
    await versions().waitFor();
    expect(await position()).toBe('1/2');
    await expectScreenToEqualLog(page, app.api, tabId);
    await page.waitForFunction(() => document.querySelectorAll('main .layer').length === 1);
    expect(await emptyFrames()).toEqual({ empty: 0, frames: expect.any(Number) });
    await page.waitForFunction(() => document.activeElement?.closest('[data-testid=versions]'));
    expect(await focused()).toBe('BUTTON Next version');
    await page.keyboard.press('Enter');
    expect(await nextTab(tabId)).toBe(forkId);
    await versions().waitFor();
    expect(await position()).toBe('2/2');
    await expectScreenToEqualLog(page, app.api, forkId);

    // While an answer streams in the fork, the original shows its own log, and back in the
    // fork the answer goes on to what the log holds.
    await sendInPage(page, 'Longer? [[sim: words 150]] [[sim: rate 60]]');
    await page.getByTestId('open-text').waitFor();
    await versions().getByRole('button', { name: 'Previous version' }).click();
    expect(await nextTab(forkId)).toBe(tabId);
    await expectScreenToEqualLog(page, app.api, tabId);
    expect((await renderedTexts(page)).map((chunk) => chunk.text).join(' ')).not.toContain(
      'Longer?',
    );
    expect((await app.api.tab(forkId)).status).toBe('running');
    await versions().getByRole('button', { name: 'Next version' }).click();
    expect(await nextTab(tabId)).toBe(forkId);
    await page.getByTestId('open-text').waitFor();
    await app.api.idle(forkId, 4);
    const streamed = await expectScreenToEqualLog(page, app.api, forkId);
    expect(streamed.at(-1)?.text.split(' ')).toHaveLength(150);
    expect(await app.api.chunks(tabId)).toEqual(parentLog);
  });
});

/** From now on, counts the animation frames with no message text on the page. */
async function countEmptyFrames(): Promise<void> {
  await page.evaluate(() => {
    const counts = { empty: 0, frames: 0, on: true };
    (window as unknown as { emptyFrames: typeof counts }).emptyFrames = counts;
    const sample = () => {
      if (!counts.on) return;
      counts.frames += 1;
      if (document.querySelectorAll('[data-testid=text]').length === 0) counts.empty += 1;
      requestAnimationFrame(sample);
    };
    requestAnimationFrame(sample);
  });
}

/** Stops counting; the frames seen, and those without message text. */
function emptyFrames(): Promise<{ empty: number; frames: number }> {
  return page.evaluate(() => {
    const counts = (
      window as unknown as { emptyFrames: { empty: number; frames: number; on: boolean } }
    ).emptyFrames;
    counts.on = false;
    return { empty: counts.empty, frames: counts.frames };
  });
}

/**
 * With SCREENSHOT_DIR set, the page in the light and the dark theme (to look at the controls by
 * eye); otherwise nothing.
 */
async function shoot(name: string): Promise<void> {
  const directory = process.env.SCREENSHOT_DIR;
  if (!directory) return;
  mkdirSync(directory, { recursive: true });
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await page.screenshot({ path: join(directory, `${name}-${colorScheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: null });
}
