/**
 * The chat for people on phones, in dark rooms and with screen readers, in a real Chromium
 * against `npm start`: axe-core finds no serious or critical violation on the app's screens (in
 * light, dark and on a phone), the tab list is a drawer at 390 × 844, the dark theme follows the
 * system's, and a finished answer is announced once in a polite live region.
 */
import { sleep } from '@chunklog/test-infra';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { measureScreens } from './support/a11y';
import { createTabInPage, sendInPage } from './support/chat-page';
import { useProductInChromium } from './support/product-in-chromium';

const app = useProductInChromium();
let context: BrowserContext | undefined;

afterEach(async () => {
  await context?.close();
  context = undefined;
});

const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

async function open(options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> {
  context = await app.browser.newContext({ viewport: { width: 1200, height: 800 }, ...options });
  const page = await context.newPage();
  await page.goto(app.product.url);
  return page;
}

/** Relative luminance of a computed `rgb(...)` colour, 0 (black) to 1 (white). */
function luminance(color: string): number {
  const [r, g, b] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((part) => {
    const channel = Number(part) / 255;
    return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

describe('accessibility', () => {
  it('has no serious or critical axe violation on the welcome, chat, context and key screens', async () => {
    const light = await measureScreens(app.browser, app.product.url);
    const dark = await measureScreens(app.browser, app.product.url, { colorScheme: 'dark' });
    const onPhone = await measureScreens(app.browser, app.product.url, phone);
    expect({ light, dark, onPhone }).toEqual({ light: [], dark: [], onPhone: [] });
  });

  it('shows the tab list as a drawer on a phone, the chat using the whole width', async () => {
    const page = await open(phone);
    const sidebar = page.getByRole('complementary', { name: 'Tabs' });
    const menu = page.getByRole('button', { name: 'Open the tab list' });
    // Closed at first: the welcome screen has the width.
    await menu.waitFor();
    expect(await sidebar.isVisible()).toBe(false);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');

    await menu.click();
    await sidebar.waitFor({ state: 'visible' });
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    // Focus moves into the drawer (to its Close button: no keyboard pops up on a phone).
    await page.waitForFunction(
      () =>
        document.activeElement?.getAttribute('aria-label') === 'Close the tab list' &&
        document.activeElement.closest('aside') !== null,
    );
    await createTabInPage(page, 'on a phone');
    // The drawer closes behind a new tab; the composer is as wide as the screen allows.
    await sidebar.waitFor({ state: 'hidden' });
    const box = await page.locator('#composer-text').boundingBox();
    expect(box!.width).toBeGreaterThan(250);
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    const heading = await page.locator('h1').boundingBox();
    expect(heading!.x).toBeGreaterThanOrEqual(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );

    // Escape closes the drawer and gives focus back to the button.
    await menu.click();
    await sidebar.waitFor({ state: 'visible' });
    await page.keyboard.press('Escape');
    await sidebar.waitFor({ state: 'hidden' });
    await page.waitForFunction(
      () => document.activeElement?.getAttribute('aria-label') === 'Open the tab list',
    );

    // The answer streams in, readable on the narrow screen.
    await sendInPage(page, '[[sim: text "small screens work"]]');
    await page.waitForSelector('[data-testid=text]:has-text("small screens work")');
  });

  it('follows a dark system theme', async () => {
    const darkPage = await open({ colorScheme: 'dark' });
    const background = (page: Page) =>
      page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const text = (page: Page) => page.evaluate(() => getComputedStyle(document.body).color);
    expect(luminance(await background(darkPage))).toBeLessThan(0.05);
    expect(luminance(await text(darkPage))).toBeGreaterThan(0.6);
    const sidebarColor = await darkPage
      .getByRole('complementary', { name: 'Tabs' })
      .evaluate((element) => getComputedStyle(element).backgroundColor);
    expect(luminance(sidebarColor)).toBeLessThan(0.05);
    await context!.close();
    const lightPage = await open({ colorScheme: 'light' });
    expect(luminance(await background(lightPage))).toBeGreaterThan(0.9);
  });

  it('announces each finished answer once in a polite live region, not token by token', async () => {
    const page = await open();
    const tabId = await createTabInPage(page, 'announced');
    const region = page.getByTestId('announcer');
    expect(await region.getAttribute('aria-live')).toBe('polite');
    expect((await region.textContent())?.trim()).toBe('');
    await sendInPage(page, '[[sim: words 40]] [[sim: rate 40]]');
    await page.waitForSelector('[data-testid=open-text]');
    // While the answer streams, the region says nothing of it.
    for (let sample = 0; sample < 5; sample += 1) {
      expect((await region.textContent())?.trim()).toBe('');
      await sleep(100);
    }
    await app.api.idle(tabId, 2);
    const stored = (await app.api.textChunks(tabId))[1]!.text;
    await page.waitForFunction(
      (start) => document.querySelector('[data-testid=announcer]')?.textContent?.includes(start),
      stored.slice(0, 40),
    );
    expect(await region.textContent()).toMatch(/^\s*Answer:/);

    // A second answer replaces the first.
    await sendInPage(page, '[[sim: text "the second answer"]]');
    await page.waitForFunction(() =>
      document.querySelector('[data-testid=announcer]')?.textContent?.includes('the second answer'),
    );
    expect(await region.textContent()).not.toContain(stored.slice(0, 40));
  });

  it('names every control and keeps focus where the keyboard was', async () => {
    const page = await open();
    await createTabInPage(page, 'keyboard');
    // Every button has a name.
    const unnamed = await page.$$eval('button, input, textarea, select', (elements) =>
      elements
        .filter((element) => {
          const label =
            element.getAttribute('aria-label') ??
            (element as HTMLInputElement).labels?.[0]?.textContent ??
            element.textContent;
          return (label ?? '').trim() === '';
        })
        .map((element) => element.outerHTML.slice(0, 80)),
    );
    expect(unnamed).toEqual([]);
    // Renaming from the keyboard gives focus back to the Rename button.
    await page.getByRole('button', { name: 'Rename', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('End');
    await page.keyboard.type(' two');
    await page.keyboard.press('Enter');
    await page.waitForSelector('h1:has-text("keyboard two")');
    await page.waitForFunction(() => document.activeElement?.textContent?.trim() === 'Rename');
  });
});
