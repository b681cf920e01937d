/**
 * The chat with auth on (`API_KEYS`): the app asks for a key once, keeps it, and streams with
 * stream tickets.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './support/browser';
import {
  ApiReader,
  createTabInPage,
  expectScreenToEqualLog,
  sampleOpenText,
  sendInPage,
} from './support/chat-page';
import { type Product, startProduct } from './support/product';

const KEY = 'web-test-key-0123456789';

let product: Product;
let browser: Browser;

beforeAll(async () => {
  [product, browser] = await Promise.all([
    startProduct({ environment: { API_KEYS: `web:${KEY}` } }),
    launchChromium(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await product?.stop();
});

describe('auth on', () => {
  it('asks for a key once, then lists, creates, streams and reloads with it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const streamUrls: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/events')) streamUrls.push(request.url());
    });
    await page.goto(product.url);

    // A wrong key is refused and the form comes back.
    await page.getByLabel('API key', { exact: true }).fill('not-the-key');
    await page.keyboard.press('Enter');
    await page.waitForSelector('text=That API key was refused.');

    await page.getByLabel('API key', { exact: true }).fill(KEY);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.waitForSelector('text=API key set');
    const tabId = await createTabInPage(page, 'with a key');
    await sendInPage(page, '[[sim: words 80]] [[sim: rate 80]]');
    const samples = await sampleOpenText(page);
    expect(samples.length).toBeGreaterThan(2);
    const api = new ApiReader(product.url, { authorization: `Bearer ${KEY}` });
    await expectScreenToEqualLog(page, api, tabId);
    // The stream was opened with a ticket, not the key.
    expect(streamUrls.length).toBeGreaterThan(0);
    for (const url of streamUrls) {
      expect(url).toContain('ticket=');
      expect(url).not.toContain(KEY);
    }

    // The key is remembered: a reload goes straight back to the tab.
    await page.reload();
    await page.waitForSelector('[data-testid=connection]:has-text("Live")');
    await expectScreenToEqualLog(page, api, tabId);
    await context.close();
  });
});
