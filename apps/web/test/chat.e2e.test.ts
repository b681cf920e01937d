/**
 * The chat in a real Chromium against the product started as the README starts it (`npm start`,
 * auth off): what the screen shows is checked against the stored log.
 */
import { sleep } from '@chunklog/test-infra';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTabInPage,
  expectScreenToEqualLog,
  openText,
  sampleOpenText,
  sendInPage,
  squash,
  waitForOpenText,
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

/** Every sample is a prefix of the final text, and the samples grow: it streamed, in order. */
function expectStreamedPrefixes(samples: string[], final: string): void {
  const squashed = samples.map(squash);
  for (const sample of squashed) expect(squash(final).startsWith(sample)).toBe(true);
  for (let index = 1; index < squashed.length; index += 1) {
    expect(squashed[index]!.length).toBeGreaterThanOrEqual(squashed[index - 1]!.length);
  }
  expect(new Set(squashed.map((sample) => sample.length)).size).toBeGreaterThan(3);
}

describe('the chat', () => {
  it('serves the app at / and keeps JSON 404s for unknown API routes', async () => {
    expect(await page.title()).toBe('chunklog');
    const response = await fetch(`${app.product.url}/v1/no-such-route`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('lists tabs a page at a time, and deletes one after asking', async () => {
    for (let index = 0; index < 31; index += 1) {
      await fetch(`${app.product.url}/v1/tabs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: `listed ${index}` }),
      });
    }
    await page.reload();
    const tabButtons = page.getByRole('navigation', { name: 'Your tabs' }).getByRole('listitem');
    await page.waitForSelector('text=listed 30');
    expect(await tabButtons.count()).toBe(30);
    await page.getByRole('button', { name: 'Load more tabs' }).click();
    await page.waitForSelector('text=listed 0');

    const tabId = await createTabInPage(page, 'to delete');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete tab' }).click();
    await page.waitForSelector('text=to delete', { state: 'detached' });
    expect((await fetch(`${app.product.url}/v1/tabs/${tabId}`)).status).toBe(404);
  });

  it('renames a tab from its header with the keyboard, in the list and the store alike', async () => {
    const tabId = await createTabInPage(page, 'old name');
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    const field = page.getByLabel('Tab title');
    expect(await field.inputValue()).toBe('old name');
    await field.fill('new name');
    await field.press('Enter');
    await page.waitForSelector('h1:has-text("new name")');
    const list = page.getByRole('navigation', { name: 'Your tabs' });
    await list.getByText('new name').waitFor();
    expect(await list.getByText('old name').count()).toBe(0);
    expect((await app.api.tab(tabId)).title).toBe('new name');

    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await page.getByLabel('Tab title').fill('abandoned');
    await page.getByLabel('Tab title').press('Escape');
    await page.waitForSelector('h1:has-text("new name")');
    expect((await app.api.tab(tabId)).title).toBe('new name');
  });

  it('streams an answer in as it is typed, and the screen then equals the stored log', async () => {
    const tabId = await createTabInPage(page, 'streaming');
    await sendInPage(page, 'Tell me a story. [[sim: words 150]] [[sim: rate 80]]');
    const samples = await sampleOpenText(page);
    const stored = await expectScreenToEqualLog(page, app.api, tabId);
    expect(stored).toHaveLength(2);
    expectStreamedPrefixes(samples, stored[1]!.text);
    expect((await app.api.tab(tabId)).lastSeq).toBe(2);
  });

  it('streams Markdown paragraph by paragraph, a code fence with a blank line kept whole', async () => {
    const tabId = await createTabInPage(page, 'paragraphs');
    const answer = [
      'First paragraph with **bold** words in it.',
      '```\nconst a = 1;\n\nconst b = 2;\n```',
      'Third paragraph, after the code, with some more words to stream.',
    ].join('\n\n');
    await sendInPage(page, `[[sim: text ${JSON.stringify(answer)}]] [[sim: rate 20]]`);
    const shapes: string[] = [];
    /** Tag of the element that shows the code after the fence's blank line, while it streams. */
    const codeHolders: string[] = [];
    await page.waitForSelector('[data-testid=open-text]');
    while ((await openText(page)) !== null) {
      const sample = await page
        .locator('[data-testid=open-text]')
        .evaluate((element) => ({
          shape: [...element.children].map((child) => child.tagName).join(','),
          holder: [...element.children].find((child) => child.textContent?.includes('const b'))
            ?.tagName,
        }))
        .catch(() => null);
      if (sample) shapes.push(sample.shape);
      if (sample?.holder) codeHolders.push(sample.holder);
      await sleep(50);
    }
    // While streaming, the finished paragraphs were already rendered as such, and the fence was
    // never split at its blank line: the code after it stayed code.
    expect(shapes).toContain('P,PRE,P');
    expect(codeHolders.length).toBeGreaterThan(0);
    expect(new Set(codeHolders)).toEqual(new Set(['PRE']));
    await app.api.idle(tabId, 2);
    expect((await app.api.textChunks(tabId))[1]!.text).toBe(answer);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=text]').length === 2);
    const html = await page.locator('[data-testid=text]').nth(1).innerHTML();
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toMatch(/<pre><code>const a = 1;\n\nconst b = 2;\n<\/code><\/pre>/);
  });

  it('streams a long paragraph as plain text and renders its Markdown once it seals', async () => {
    const tabId = await createTabInPage(page, 'long paragraph');
    const words = Array.from({ length: 500 }, (_, index) => `word${index}`).join(' ');
    const answer = `${words} and then **bold** at the end.`;
    await sendInPage(page, `[[sim: text ${JSON.stringify(answer)}]] [[sim: rate 150]]`);
    await page.waitForSelector('[data-testid=open-text]');
    const samples: string[] = [];
    let plain = false;
    for (;;) {
      const sample = await page
        .locator('[data-testid=open-text]')
        .evaluate(
          (element) => ({
            text: element.textContent ?? '',
            plain: element.querySelector('p.plain') !== null,
          }),
          null,
          { timeout: 1000 },
        )
        .catch(() => null);
      if (sample === null) break;
      samples.push(sample.text);
      plain ||= sample.plain;
      await sleep(50);
    }
    // Past a few thousand characters the paragraph being typed was no longer parsed each frame,
    // and what showed was still the text so far; sealed, it is Markdown like any other.
    expect(plain).toBe(true);
    // The last sample may catch the sealed block rendered as Markdown, before it leaves the
    // open slot: the same text with its emphasis markers gone. Every other one is a prefix.
    const rendered = squash(answer.replace('**bold**', 'bold'));
    expectStreamedPrefixes(
      samples.filter((sample) => squash(sample) !== rendered),
      answer,
    );
    await app.api.idle(tabId, 2);
    expect((await app.api.textChunks(tabId))[1]!.text).toBe(answer);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=text]').length === 2);
    const sealed = page.locator('[data-testid=text]').nth(1);
    expect(await sealed.innerHTML()).toContain('<strong>bold</strong>');
    expect(squash((await sealed.textContent()) ?? '')).toBe(squash(answer.replace(/\*\*/g, '')));
  });

  it('loses and doubles nothing when the page reloads in the middle of an answer', async () => {
    const tabId = await createTabInPage(page, 'reload');
    await sendInPage(page, '[[sim: words 250]] [[sim: rate 60]]');
    await waitForOpenText(page, 40);
    await page.reload();
    const samples = await sampleOpenText(page);
    const stored = await expectScreenToEqualLog(page, app.api, tabId);
    // After the reload the block came back with its text so far, then went on.
    expect(squash(samples[0] ?? '').length).toBeGreaterThan(30);
    expectStreamedPrefixes(samples, stored[1]!.text);
  });

  it('shows the connection dropping mid-block and recovers every character', async () => {
    const tabId = await createTabInPage(page, 'offline');
    await sendInPage(page, '[[sim: words 300]] [[sim: rate 60]]');
    await waitForOpenText(page, 30);
    await context.setOffline(true);
    await page.waitForSelector('[data-testid=connection]:not(:has-text("Live"))', {
      timeout: 20_000,
    });
    const before = (await openText(page)) ?? '';
    await sleep(1500);
    await context.setOffline(false);
    await page.waitForSelector('[data-testid=connection]:has-text("Live")', { timeout: 30_000 });
    const stored = await expectScreenToEqualLog(page, app.api, tabId);
    expect(squash(stored[1]!.text).startsWith(squash(before))).toBe(true);
  });

  it('renders a thinking and tool-call turn with each call paired with its result', async () => {
    const tabId = await createTabInPage(page, 'tools', { thinking: true });
    await sendInPage(
      page,
      '[[sim: think "plan first"]] [[sim: tool calculator {"expression":"6*7"}]] [[sim: tool get_time]]',
    );
    await app.api.idle(tabId, 3);
    const chunks = await app.api.chunks(tabId);
    const calls = chunks.flatMap((chunk) => (chunk.type === 'tool_call' ? [chunk] : []));
    const results = chunks.flatMap((chunk) => (chunk.type === 'tool_result' ? [chunk] : []));
    expect(calls).toHaveLength(2);
    expect(chunks.some((chunk) => chunk.type === 'thinking')).toBe(true);
    await page.waitForFunction(
      (count) => document.querySelectorAll('[data-testid=tool-result]').length === count,
      results.length,
    );
    for (const call of calls) {
      const card = page.locator(`[data-testid=tool-call][data-call-id="${call.data.callId}"]`);
      await expect(card.locator('.tool-name').textContent()).resolves.toBe(call.data.name);
      const result = results.find((chunk) => chunk.data.callId === call.data.callId)!;
      const shown = await card.locator('[data-testid=tool-result] pre').textContent();
      expect(JSON.parse(shown ?? 'null')).toEqual(result.data.result);
    }
    // Thinking is collapsed once sealed, and opens from the keyboard.
    const thinking = page.locator('[data-testid=thinking]').first();
    expect(await thinking.getAttribute('open')).toBeNull();
    await thinking.locator('summary').focus();
    await page.keyboard.press('Enter');
    expect(await thinking.textContent()).toContain('plan first');
  });

  it("renders Markdown and never runs the HTML in it, nor the user's text", async () => {
    const tabId = await createTabInPage(page, 'markdown');
    const hostile =
      "**bold** <img src=x onerror='window.__pwned=1'> <script>window.__pwned=2</script> " +
      "<a href='javascript:window.__pwned=3'>click</a> [link](javascript:window.__pwned=4)";
    await sendInPage(page, `${hostile} [[sim: text "${hostile.replaceAll('"', "'")}"]]`);
    await app.api.idle(tabId, 2);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=text]').length === 2);
    const markdown = page.locator('[data-testid=text]');
    // The user's bubble is the text as typed; the answer is Markdown, its raw HTML shown as text.
    expect(await markdown.nth(0).textContent()).toContain(hostile);
    expect(await markdown.nth(0).evaluate((element) => element.children.length)).toBe(0);
    expect(await markdown.nth(1).innerHTML()).toContain('<strong>bold</strong>');
    const markup = await markdown
      .nth(1)
      .evaluate((element) =>
        [...element.querySelectorAll('*')].map((child) => child.outerHTML.split('>')[0]),
      );
    expect(markup.join(' ')).not.toMatch(/<script|<img|onerror|javascript:/i);
    expect(await markdown.nth(1).textContent()).toContain('<script>window.__pwned=2</script>');
    for (const link of await markdown.locator('a').all()) await link.click({ force: true });
    await sleep(300);
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  /** Sends a message in `mode` while a 60-word answer streams; the text chunks once all is answered. */
  async function sendWhileAnswering(mode: 'interrupt' | 'enqueue', reply: string) {
    const tabId = await createTabInPage(page, mode);
    await sendInPage(page, '[[sim: words 60]] [[sim: rate 40]]');
    await page.waitForSelector('[data-testid=open-text]');
    await page.check(`input[value=${mode}]`);
    await sendInPage(page, `And this. [[sim: text "${reply}"]]`);
    await page.waitForSelector(`text=${reply}`, { timeout: 60_000 });
    await app.api.idle(tabId, 4);
    const texts = (await app.api.chunks(tabId)).flatMap((chunk) =>
      chunk.type === 'text' ? [chunk] : [],
    );
    expect(texts.map((chunk) => chunk.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(texts[3]!.data.text).toBe(reply);
    return texts;
  }

  it('folds an interrupting message into the running turn', async () => {
    const texts = await sendWhileAnswering('interrupt', 'the new answer');
    // An interrupt joins the turn that was running; the answer goes on from it.
    expect(new Set(texts.map((chunk) => chunk.turnId)).size).toBe(1);
  });

  it('queues a message until the running answer is done', async () => {
    const texts = await sendWhileAnswering('enqueue', 'queued answer');
    // A queued message waits for the running turn to end and runs a turn of its own.
    expect(texts[1]!.data.interrupted).toBeUndefined();
    expect(texts[1]!.data.text.trim().split(/\s+/)).toHaveLength(60);
    expect(texts[2]!.turnId).not.toBe(texts[1]!.turnId);
  });

  it('refuses a message in reject mode while a turn runs, and Stop ends the turn', async () => {
    const tabId = await createTabInPage(page, 'stop');
    await sendInPage(page, '[[sim: words 400]] [[sim: rate 40]]');
    await page.waitForSelector('[data-testid=open-text]');
    await page.check('input[value=reject]');
    await sendInPage(page, 'not now');
    await page.waitForSelector('[role=alert]:has-text("Not sent")');
    expect(await page.inputValue('#composer-text')).toBe('not now');

    const stop = page.getByRole('button', { name: 'Stop', exact: true });
    await stop.click();
    const tab = await app.api.idle(tabId, 2);
    await stop.waitFor({ state: 'detached' });
    const chunks = await app.api.chunks(tabId);
    expect(chunks.filter((chunk) => chunk.type === 'text' && chunk.role === 'user')).toHaveLength(
      1,
    );
    const answer = chunks.find((chunk) => chunk.type === 'text' && chunk.role === 'assistant');
    if (answer?.type === 'text') expect(answer.data.interrupted).toBe(true);
    expect(tab.status).toBe('idle');
  });
});
