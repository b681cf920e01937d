/**
 * Untrusted text in a real Chromium against `npm start`: the user's words shown exactly as
 * typed, markup in an answer shown as text and never fetched from, and the app working under
 * its Content-Security-Policy without a single violation.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sleep } from '@chunklog/test-infra';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium } from './support/browser';
import {
  ApiReader,
  createTabInPage,
  expectScreenToEqualLog,
  renderedTexts,
  sampleOpenText,
  sendInPage,
} from './support/chat-page';
import { type Product, startProduct } from './support/product';

let product: Product;
let browser: Browser;
let api: ApiReader;
let context: BrowserContext;
let page: Page;
/** Requests a page made to the listener: a message that makes the browser fetch shows here. */
let listener: Server;
let listenerUrl: string;
const fetched: string[] = [];
/** CSP violations the page reported, and console errors. */
let violations: string[];
let consoleErrors: string[];

beforeAll(async () => {
  listener = createServer((request, response) => {
    fetched.push(`${request.method} ${request.url}`);
    response.end();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  [product, browser] = await Promise.all([startProduct(), launchChromium()]);
  api = new ApiReader(product.url);
});

afterAll(async () => {
  await browser?.close();
  await product?.stop();
  await new Promise((resolve) => listener?.close(resolve));
});

beforeEach(async () => {
  violations = [];
  consoleErrors = [];
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  // Before any script of the page: every violation of its policy is reported here.
  await context.exposeFunction('reportViolation', (text: string) => violations.push(text));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { reportViolation(text: string): void }).reportViolation(
        `${event.violatedDirective} ${event.blockedURI}`,
      );
    });
  });
  page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
});

afterEach(async () => {
  await context.close();
});

describe('untrusted text', () => {
  it('runs the app under its Content-Security-Policy with no violation while an answer streams', async () => {
    const response = await page.goto(product.url);
    const policy = response?.headers()['content-security-policy'] ?? '';
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe-inline');
    expect(response?.headers()['x-content-type-options']).toBe('nosniff');
    expect(response?.headers()['x-frame-options']).toBe('DENY');

    const tabId = await createTabInPage(page, 'under the policy');
    await sendInPage(page, 'Tell me **more**. [[sim: words 60]] [[sim: rate 80]]');
    const samples = await sampleOpenText(page);
    expect(samples.length).toBeGreaterThan(2);
    await expectScreenToEqualLog(page, api, tabId);
    // The context panel and a reload exercise the rest of the app's code and styles.
    await page.getByRole('button', { name: 'Context', exact: true }).click();
    await sleep(300);
    await page.reload();
    await page.waitForSelector('[data-testid=connection]:has-text("Live")');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=text]').length === 2);
    expect(violations).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it("shows the user's text exactly as typed and raw HTML in an answer as text", async () => {
    await page.goto(product.url);
    const tabId = await createTabInPage(page, 'as typed');
    const question = 'How do I center a <div> in CSS? Is 6*7 bigger than 2*3?';
    const answer = 'Wrap it in a <section> element';
    await sendInPage(page, `${question}\n  _kept_ \`as\` is [[sim: text "${answer}"]]`);
    await api.idle(tabId, 2);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=text]').length === 2);
    const stored = await api.textChunks(tabId);
    const bubbles = page.locator('[data-testid=text]');
    // The user's bubble: every character, whitespace included, and no element made of them.
    expect(await bubbles.nth(0).textContent()).toBe(stored[0]!.text);
    expect(await bubbles.nth(0).evaluate((element) => element.children.length)).toBe(0);
    expect(stored[0]!.text).toContain(question);
    expect((await bubbles.nth(1).textContent())?.trim()).toBe(answer);
    expect(await bubbles.nth(1).locator('section').count()).toBe(0);
    expect(violations).toEqual([]);
  });

  it('fetches nothing that markup in a message points at, and shows that markup as text', async () => {
    await page.goto(product.url);
    const tabId = await createTabInPage(page, 'media');
    const at = (name: string) => `${listenerUrl}/${name}`;
    const payloads = [
      `<video src="${at('video')}" poster="${at('poster')}"></video>`,
      `<audio src="${at('audio')}" autoplay></audio>`,
      `<video><source src="${at('source')}"></video>`,
      `<picture><source srcset="${at('srcset')}"><img src="${at('picture-img')}"></picture>`,
      `<svg><image href="${at('svg-image')}" /></svg>`,
      `<table background="${at('table-background')}"><tr><td>cell</td></tr></table>`,
      `<img src="${at('img')}">`,
      `![pixel](${at('markdown-image')})`,
      `<p style="background:url(${at('style')})">styled</p>`,
    ];
    // Each payload on its own line: the user's bubble has them all, and so has the answer.
    const text = payloads.join('\n');
    await sendInPage(page, `${text}\n[[sim: text ${JSON.stringify(text)}]]`);
    await api.idle(tabId, 2);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=text]').length === 2);
    await sleep(1000);
    expect(fetched).toEqual([]);

    const [user, assistant] = await renderedTexts(page);
    for (const payload of payloads.filter((payload) => payload.startsWith('<'))) {
      expect(user!.text).toContain(payload);
      // Blank lines and the line breaks of Markdown aside, the answer shows the tags as typed.
      expect(assistant!.text.replace(/\s+/g, ' ')).toContain(payload.replace(/\s+/g, ' '));
    }
    await page
      .getByText(`<video src="${at('video')}"`)
      .first()
      .waitFor({ state: 'visible' });
    const elements = await page
      .locator('[data-testid=text]')
      .nth(1)
      .evaluate((element) =>
        [...element.querySelectorAll('*')].map((child) =>
          [child.localName, ...[...child.attributes].map((attribute) => attribute.name)].join(' '),
        ),
      );
    // Only paragraphs, line breaks and the image shown as a link, with nothing that fetches.
    expect(
      elements.filter((element) => !['p', 'br', 'a href target rel'].includes(element)),
    ).toEqual([]);
    expect(violations).toEqual([]);
    expect(fetched).toEqual([]);
  });
});
