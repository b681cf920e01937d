/**
 * What a person notices in a day of work with the chat, in a real Chromium against `npm start`:
 * model failures said plainly and retried with one click, the tab list in order of activity,
 * tab switches in the browser's history, a deleted tab's address explained, copy buttons, the
 * way back to the newest message, an in-app delete confirmation, and a message sent during an
 * answer shown at once.
 */
import { sleep } from '@chunklog/test-infra';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTabInPage, sendInPage } from './support/chat-page';
import { useProductInChromium } from './support/product-in-chromium';

const app = useProductInChromium();
let context: BrowserContext;
let page: Page;
/** Native dialogs (`confirm`, `alert`) the page opened: the app has none. */
let nativeDialogs: string[];

beforeEach(async () => {
  nativeDialogs = [];
  context = await app.browser.newContext({ viewport: { width: 1200, height: 800 } });
  page = await context.newPage();
  page.on('dialog', (dialog) => {
    nativeDialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(app.product.url);
});

afterEach(async () => {
  await context.close();
});

async function createTabByApi(title: string): Promise<string> {
  const response = await fetch(`${app.product.url}/v1/tabs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  return ((await response.json()) as { tab: { id: string } }).tab.id;
}

const tabList = () => page.getByRole('navigation', { name: 'Your tabs' });

/** The titles in the tab list, top to bottom. */
const listedTitles = () =>
  page.$$eval('nav[aria-label="Your tabs"] .title', (elements) =>
    elements.map((element) => element.textContent ?? ''),
  );

describe('model failures', () => {
  it('says plainly that the model failed, keeps the details behind a disclosure, and retries the message', async () => {
    const tabId = await createTabInPage(page, 'failing');
    const message = 'Please answer. [[sim: error 500 times=9]]';
    await sendInPage(page, message);
    // The worker retries for a few seconds: the screen shows work going on meanwhile.
    await page.getByTestId('activity').waitFor({ timeout: 5_000 });
    const error = page.getByTestId('error');
    await error.waitFor({ timeout: 60_000 });
    await expect(error.locator('.summary').textContent()).resolves.toBe(
      'The model failed to answer.',
    );
    // The raw text is there, folded away.
    const details = error.locator('details');
    expect(await details.getAttribute('open')).toBeNull();
    expect(await details.locator('summary').textContent()).toContain('Details');
    const raw = (await details.textContent()) ?? '';
    expect(raw).toContain('500');
    expect(raw).toContain('The model call failed');
    expect(await error.locator('details pre').isVisible()).toBe(false);
    await details.locator('summary').click();
    expect(await error.locator('details pre').isVisible()).toBe(true);
    await page.getByTestId('activity').waitFor({ state: 'detached' });

    // Retry sends the failed message again.
    await app.api.idle(tabId, 2);
    await error.getByRole('button', { name: 'Retry' }).click();
    for (const deadline = Date.now() + 20_000; ; await sleep(100)) {
      const users = (await app.api.chunks(tabId)).filter(
        (chunk) => chunk.type === 'text' && chunk.role === 'user',
      );
      if (users.length === 2) {
        expect(users.map((chunk) => chunk.type === 'text' && chunk.data.text)).toEqual([
          message,
          message,
        ]);
        break;
      }
      if (Date.now() > deadline) throw new Error('Retry sent nothing');
    }
  });

  it('says "Retrying (2 of 5)…" while an overloaded model is retried, then shows the answer', async () => {
    await createTabInPage(page, 'overloaded');
    // The simulator answers 529 twice, asking each time for a second's wait (retry-after), so
    // each retry is on screen long enough to read; the worker's policy allows five attempts, so
    // the retries are attempts 2 and 3 of 5.
    await sendInPage(
      page,
      'Hello [[sim: error 529 retry-after=1 times=2]] [[sim: text "made it"]]',
    );
    const activity = page.getByTestId('activity');
    for (const attempt of [2, 3]) {
      await activity
        .filter({ hasText: `Retrying (${attempt} of 5)…` })
        .waitFor({ timeout: 10_000 });
      const text = (await activity.textContent()) ?? '';
      expect(text).toContain('529 overloaded_error');
      expect(text).toMatch(/trying again in 1 s/);
    }
    await page.waitForSelector('[data-testid=text]:has-text("made it")', { timeout: 30_000 });
    await activity.waitFor({ state: 'detached' });
    expect(await page.getByText(/Retrying \(/).count()).toBe(0);
    expect(await page.getByTestId('error').count()).toBe(0);
  });
});

describe('tabs', () => {
  it('puts focus in the composer after a new tab is created', async () => {
    await createTabInPage(page, 'focus');
    await page.waitForFunction(() => document.activeElement?.id === 'composer-text');
    await page.keyboard.type('typed at once');
    expect(await page.inputValue('#composer-text')).toBe('typed at once');
  });

  it("says so when the address names a deleted tab or another tenant's", async () => {
    const tabId = await createTabByApi('gone soon');
    await fetch(`${app.product.url}/v1/tabs/${tabId}`, { method: 'DELETE' });
    await page.goto(`${app.product.url}/#/tabs/${tabId}`);
    await page.reload();
    const missing = page.getByTestId('missing-tab');
    await missing.waitFor();
    expect(await missing.textContent()).toContain('This tab was deleted or is not yours');
    expect(await page.getByRole('heading', { name: 'Welcome to chunklog' }).count()).toBe(0);

    // A tab no one has, reached from inside the app.
    await page.evaluate(() => {
      location.hash = '#/tabs/00000000-0000-4000-8000-000000000000';
    });
    await missing.waitFor();
  });

  it('makes tab switches history entries: Back and Forward move between tabs in the app', async () => {
    const first = await createTabInPage(page, 'history one');
    const second = await createTabInPage(page, 'history two');
    const heading = () => page.locator('h1').textContent();
    await expect.poll(heading).toBe('history two');
    await page.goBack();
    await page.waitForFunction((id) => location.hash === `#/tabs/${id}`, first);
    await page.waitForSelector('h1:has-text("history one")');
    await page.goForward();
    await page.waitForFunction((id) => location.hash === `#/tabs/${id}`, second);
    await page.waitForSelector('h1:has-text("history two")');
    // Selecting from the list is an entry too.
    await tabList()
      .getByRole('button', { name: /history one/ })
      .click();
    await page.waitForSelector('h1:has-text("history one")');
    await page.goBack();
    await page.waitForSelector('h1:has-text("history two")');
    expect(new URL(page.url()).origin).toBe(app.product.url);
  });

  it('orders tabs by last activity, shows a relative time and a running indicator, even for a turn within one frame', async () => {
    const older = await createTabInPage(page, 'active one');
    await createTabInPage(page, 'quiet one');
    expect((await listedTitles()).slice(0, 2)).toEqual(['quiet one', 'active one']);
    const meta = (title: string) =>
      tabList()
        .getByRole('button', { name: new RegExp(title) })
        .getByTestId('tab-meta')
        .textContent();
    expect(await meta('quiet one')).toMatch(/just now|ago/);
    expect(await meta('quiet one')).not.toMatch(/chunks/);

    // A long answer: the running tab says so in the list.
    await tabList()
      .getByRole('button', { name: /active one/ })
      .click();
    await page.waitForSelector('h1:has-text("active one")');
    await sendInPage(page, '[[sim: words 60]] [[sim: rate 40]]');
    await page.waitForSelector('[data-testid=open-text]');
    await page.waitForFunction(() =>
      [...document.querySelectorAll('nav[aria-label="Your tabs"] button')].some(
        (button) =>
          button.textContent?.includes('active one') &&
          button.querySelector('[data-testid=tab-running]') !== null,
      ),
    );
    await app.api.idle(older, 2);
    await page.waitForSelector('[data-testid=tab-running]', { state: 'detached' });
    expect((await listedTitles()).slice(0, 2)).toEqual(['active one', 'quiet one']);

    // A whole turn between two animation frames still reaches the list.
    await tabList()
      .getByRole('button', { name: /quiet one/ })
      .click();
    await page.waitForSelector('h1:has-text("quiet one")');
    await page.waitForSelector('[data-testid=connection]:has-text("Live")');
    await page.evaluate(() => {
      const next = window.requestAnimationFrame.bind(window);
      window.requestAnimationFrame = (callback) =>
        next(() => setTimeout(() => next(callback), 20_000)) as number;
    });
    const tabId = await page.evaluate(() => location.hash.slice('#/tabs/'.length));
    await sendInPage(page, '[[sim: text "quick"]]');
    await app.api.idle(tabId, 2);
    await page.waitForFunction(
      () =>
        document.querySelector('nav[aria-label="Your tabs"] .title')?.textContent === 'quiet one',
      null,
      { timeout: 10_000 },
    );
  });

  it('asks in the page before deleting a tab, and Cancel keeps it', async () => {
    const tabId = await createTabInPage(page, 'to delete');
    const deleteButton = page.getByRole('button', { name: 'Delete', exact: true });
    await deleteButton.click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('to delete');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await fetch(`${app.product.url}/v1/tabs/${tabId}`)).status).toBe(200);
    // Focus goes back to the button that opened it.
    await page.waitForFunction(() => document.activeElement?.textContent?.trim() === 'Delete');

    await deleteButton.click();
    await dialog.getByRole('button', { name: 'Delete tab' }).click();
    await tabList().getByText('to delete').waitFor({ state: 'detached' });
    expect((await fetch(`${app.product.url}/v1/tabs/${tabId}`)).status).toBe(404);
    expect(nativeDialogs).toEqual([]);
  });
});

describe('the conversation', () => {
  it('copies an answer and a code block to the clipboard', async () => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: app.product.url,
    });
    await createTabInPage(page, 'copy');
    const answer = 'Here it is:\n\n```\nconst x = 1;\n```\n\nDone.';
    await sendInPage(page, `[[sim: text ${JSON.stringify(answer)}]]`);
    await page.waitForSelector('[data-testid=text] pre');
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
    await page.getByRole('button', { name: 'Copy code' }).click();
    await page.waitForFunction(async () => (await navigator.clipboard.readText()) !== '');
    expect(await clipboard()).toBe('const x = 1;\n');
    await page.getByRole('button', { name: 'Copy answer' }).click();
    await page.waitForFunction(
      async (text) => (await navigator.clipboard.readText()) === text,
      answer,
    );
    // The buttons add nothing to the text on screen.
    const shown = await page.locator('[data-testid=text]').nth(1).textContent();
    expect(shown).not.toMatch(/Copy/);
  });

  it('offers a way back to the newest message while reading older text', async () => {
    await page.setViewportSize({ width: 1200, height: 500 });
    const tabId = await createTabInPage(page, 'scrolling');
    await sendInPage(page, '[[sim: words 600]]');
    await app.api.idle(tabId, 2);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=text]').length === 2);
    const jump = page.getByRole('button', { name: 'Scroll to latest' });
    expect(await jump.count()).toBe(0);
    await page.getByRole('log', { name: 'Messages' }).evaluate((element) => {
      element.scrollTop = 0;
      element.dispatchEvent(new Event('scroll'));
    });
    await jump.waitFor();
    await jump.click();
    await jump.waitFor({ state: 'detached' });
    const gap = await page
      .getByRole('log', { name: 'Messages' })
      .evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight);
    expect(gap).toBeLessThan(30);
  });

  it('shows the interrupt, enqueue and reject choice only while a turn runs', async () => {
    await createTabInPage(page, 'modes');
    expect(await page.locator('input[name=mode]').count()).toBe(0);
    await sendInPage(page, '[[sim: words 40]] [[sim: rate 40]]');
    await page.waitForSelector('[data-testid=open-text]');
    await page.locator('input[value=enqueue]').waitFor();
    expect(await page.locator('input[name=mode]').count()).toBe(3);
    await page.waitForSelector('[data-testid=open-text]', { state: 'detached', timeout: 30_000 });
    await page.locator('input[name=mode]').first().waitFor({ state: 'detached' });
  });

  it('shows a message sent during an answer at once, then once it is stored', async () => {
    const tabId = await createTabInPage(page, 'interrupting');
    await sendInPage(page, '[[sim: words 200]] [[sim: rate 30]]');
    await page.waitForSelector('[data-testid=open-text]');
    // A slow network: the message reaches the gateway two seconds after Enter. The screen
    // shows it at once all the same, however soon the worker stores it after that.
    await page.route(
      (address) => address.pathname.endsWith('/messages'),
      async (route) => {
        await sleep(2_000);
        await route.continue();
      },
    );
    const sentAt = Date.now();
    await sendInPage(page, 'Stop, look at this instead. [[sim: text "new answer"]]');
    await page.waitForSelector('.group.user:has-text("Stop, look at this instead.")', {
      timeout: 1_000,
    });
    expect(Date.now() - sentAt).toBeLessThan(1_000);
    expect(await page.locator('.group.user').count()).toBe(2);
    await page.waitForSelector('[data-testid=text]:has-text("new answer")', { timeout: 60_000 });
    await app.api.idle(tabId, 4);
    // Shown once: the stored message took the place of the one shown while it was on its way.
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('.group.user')].filter((group) =>
          group.textContent?.includes('Stop, look at this instead.'),
        ).length === 1 && document.querySelectorAll('[data-testid=pending-text]').length === 0,
    );
  });
});
