/**
 * Tool calls that wait for a person, in a real Chromium against the product (`npm start`, auth
 * off): a tab created through the API with an approval policy pauses on its calculator call; the
 * card in the chat approves, edits or denies it, and the stored log shows what ran.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Chunk, Tab } from '@chunklog/chunk-core';
import { sleep } from '@chunklog/test-infra';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/a11y';
import { useProductInChromium } from './support/product-in-chromium';

const app = useProductInChromium();
let context: BrowserContext;
let page: Page;

beforeEach(async () => {
  context = await app.browser.newContext({ viewport: { width: 1200, height: 800 } });
  page = await context.newPage();
});

afterEach(async () => {
  await context.close();
});

const json = { 'content-type': 'application/json' };

/** A tab whose calculator calls wait for a person, paused on the call `expression` asks for. */
async function waitingTab(
  title: string,
  expression = '6*7',
  policy: { expiresAfterSeconds?: number } = {},
): Promise<{ tab: Tab; callId: string }> {
  const created = await fetch(`${app.product.url}/v1/tabs`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ title, config: { approval: { tools: ['calculator'], ...policy } } }),
  });
  expect(created.status).toBe(201);
  const { tab } = (await created.json()) as { tab: Tab };
  const text = `Work it out [[sim: tool calculator ${JSON.stringify({ expression })}]]`;
  const sent = await fetch(`${app.product.url}/v1/tabs/${tab.id}/messages`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ text }),
  });
  expect(sent.status).toBe(202);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const now = await app.api.tab(tab.id);
    if (now.status === 'waiting' && now.waiting) {
      return { tab: now, callId: now.waiting.calls[0]!.callId };
    }
    if (Date.now() > deadline) throw new Error(`never waiting: ${JSON.stringify(now)}`);
    await sleep(50);
  }
}

/** The call's result in the stored log, once the resumed turn has ended. */
async function resultOf(tabId: string, callId: string) {
  await app.api.idle(tabId, 2);
  const log = await app.api.chunks(tabId);
  const result = log.find(
    (chunk): chunk is Chunk & { type: 'tool_result' } =>
      chunk.type === 'tool_result' && chunk.data.callId === callId,
  );
  const decision = log.find(
    (chunk): chunk is Chunk & { type: 'approval_decision' } =>
      chunk.type === 'approval_decision' && chunk.data.callId === callId,
  );
  return { result: result?.data, decision: decision?.data };
}

async function openTab(tabId: string): Promise<void> {
  await page.goto(`${app.product.url}/#/tabs/${tabId}`);
  await page.waitForSelector('[data-testid=connection]:has-text("Live")');
}

const card = () => page.getByTestId('approval');
const outcome = () => page.getByTestId('approval-outcome');

describe('a tool call that waits for you', () => {
  it('shows the call with Approve, Edit and Deny; Approve runs it, and the tab list says who waits', async () => {
    const other = await app.api.tab(
      (
        (await (
          await fetch(`${app.product.url}/v1/tabs`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ title: 'nothing waits here' }),
          })
        ).json()) as { tab: Tab }
      ).tab.id,
    );
    const { tab, callId } = await waitingTab('approve me');
    await openTab(tab.id);
    await card().waitFor();
    const call = page.locator(`[data-testid=tool-call][data-call-id="${callId}"]`);
    expect(await call.locator('.tool-name').textContent()).toBe('calculator');
    expect(JSON.parse((await call.locator('.tool-args').textContent()) ?? '')).toEqual({
      expression: '6*7',
    });
    for (const name of ['Approve', 'Edit', 'Deny']) {
      await expect(card().getByRole('button', { name, exact: true }).isVisible()).resolves.toBe(
        true,
      );
    }
    expect(await card().textContent()).toContain('Sending a message denies the waiting call');
    // The request chunk is part of the call's block, not a line of its own.
    expect(await page.locator('article[data-role=system]').count()).toBe(0);
    // Announced to a screen reader.
    await page.waitForFunction(() =>
      document
        .querySelector('[data-testid=announcer]')
        ?.textContent?.includes('Needs your approval'),
    );

    // The tab list marks the waiting tab, and only it.
    const list = page.getByRole('navigation', { name: 'Your tabs' });
    const waitingItem = list.getByRole('listitem').filter({ hasText: 'approve me' });
    await waitingItem.getByTestId('tab-waiting').waitFor();
    expect(await waitingItem.getByTestId('tab-waiting').textContent()).toBe('Waiting for you');
    const idleItem = list.getByRole('listitem').filter({ hasText: other.title });
    expect(await idleItem.getByTestId('tab-waiting').count()).toBe(0);

    await card().getByRole('button', { name: 'Approve', exact: true }).click();
    await outcome().waitFor();
    expect((await outcome().textContent())?.trim()).toContain('Approved');
    // Focus follows the card's outcome: the buttons it was on are gone.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
      'approval-outcome',
    );
    const { result, decision } = await resultOf(tab.id, callId);
    expect(decision).toMatchObject({ decision: 'approve' });
    expect(decision?.input).toBeUndefined();
    expect(result).toMatchObject({ result: { value: 42 }, isError: false });
    await page.locator(`[data-call-id="${callId}"] [data-testid=tool-result]`).waitFor();
    expect((await outcome().textContent())?.trim()).toMatch(/Approved$/);
    // The turn went on: the badge is gone.
    await waitingItem.getByTestId('tab-waiting').waitFor({ state: 'detached' });
  });

  it('Edit checks the JSON, shows the server refusing bad input, and approves with the edits', async () => {
    const { tab, callId } = await waitingTab('edit me');
    await openTab(tab.id);
    await card().getByRole('button', { name: 'Edit', exact: true }).click();
    const input = card().getByLabel('Input for calculator (JSON)');
    await shoot('approval-edit');
    // Focus goes into the field.
    expect(await input.evaluate((element) => element === document.activeElement)).toBe(true);
    expect(JSON.parse(await input.inputValue())).toEqual({ expression: '6*7' });

    await input.fill('{"expression": ');
    await card().getByRole('button', { name: 'Approve with edits' }).click();
    expect(await page.getByTestId('approval-problem').textContent()).toContain('Not valid JSON');
    await input.fill('["2+3"]');
    await card().getByRole('button', { name: 'Approve with edits' }).click();
    expect(await page.getByTestId('approval-problem').textContent()).toContain('JSON object');
    // Neither was sent.
    expect((await app.api.tab(tab.id)).status).toBe('waiting');

    await input.fill('{"expression": 7}');
    await card().getByRole('button', { name: 'Approve with edits' }).click();
    await page.waitForFunction(() =>
      document
        .querySelector('[data-testid=approval-problem]')
        ?.textContent?.includes('decisions[0].input'),
    );
    expect((await app.api.tab(tab.id)).status).toBe('waiting');
    await shoot('approval-edit-refused');
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      expect(await seriousViolations(page, `approval edit (${colorScheme})`)).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: null });

    await input.fill('{"expression": "2+3"}');
    await card().getByRole('button', { name: 'Approve with edits' }).click();
    await outcome().waitFor();
    expect((await outcome().textContent())?.trim()).toContain('Approved with edits');
    const { result, decision } = await resultOf(tab.id, callId);
    expect(decision).toMatchObject({ decision: 'approve', input: { expression: '2+3' } });
    expect(result).toMatchObject({ result: { value: 5 }, isError: false });
    expect(
      JSON.parse((await page.getByTestId('approval-edited-input').textContent()) ?? ''),
    ).toEqual({ expression: '2+3' });
  });

  it('Deny sends the reason; the model sees it; input that looks like HTML stays text', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1">';
    const { tab, callId } = await waitingTab('deny me', hostile);
    await openTab(tab.id);
    await card().waitFor();
    const call = page.locator(`[data-testid=tool-call][data-call-id="${callId}"]`);
    expect(await call.locator('img').count()).toBe(0);
    expect(await call.locator('.tool-args').textContent()).toContain(
      hostile.replaceAll('"', '\\"'),
    );

    await card().getByRole('button', { name: 'Deny', exact: true }).click();
    const reason = card().getByLabel(/Reason/);
    expect(await reason.evaluate((element) => element === document.activeElement)).toBe(true);
    // Escape goes back to the three buttons, focus on Deny.
    await page.keyboard.press('Escape');
    const denyButton = card().getByRole('button', { name: 'Deny', exact: true });
    expect(await denyButton.evaluate((element) => element === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await reason.fill('not with that input');
    await page.keyboard.press('Enter');
    await outcome().waitFor();
    expect((await outcome().textContent())?.trim()).toContain('Denied: not with that input');
    const { result, decision } = await resultOf(tab.id, callId);
    expect(decision).toMatchObject({ decision: 'deny', reason: 'not with that input' });
    expect(result?.isError).toBe(true);
    expect(JSON.stringify(result?.result)).toContain('not with that input');
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it('a reload while it waits shows the same buttons; a decision made through the API shows at once', async () => {
    const { tab, callId } = await waitingTab('reload me', '6*7', { expiresAfterSeconds: 3600 });
    await openTab(tab.id);
    await card().waitFor();
    // An expiry is said, in the page's own time.
    const expiresAt = (await app.api.tab(tab.id)).waiting?.expiresAt;
    expect(expiresAt).toBeGreaterThan(Date.now());
    const expected = await page.evaluate((at) => new Date(at).toLocaleString(), expiresAt!);
    expect(await card().textContent()).toContain(`Denied on its own at ${expected}.`);
    await page.reload();
    await page.waitForSelector('[data-testid=connection]:has-text("Live")');
    await card().waitFor();
    for (const name of ['Approve', 'Edit', 'Deny']) {
      expect(await card().getByRole('button', { name, exact: true }).count()).toBe(1);
    }
    await shoot('approval-card');
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      expect(await seriousViolations(page, `approval card (${colorScheme})`)).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: null });

    const decided = await fetch(`${app.product.url}/v1/tabs/${tab.id}/approvals`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        decisions: [{ callId, decision: 'deny', reason: 'decided elsewhere' }],
      }),
    });
    expect(decided.status).toBe(202);
    // No reload: the open page hears of it through its stream.
    await outcome().waitFor({ timeout: 15_000 });
    expect((await outcome().textContent())?.trim()).toContain('Denied: decided elsewhere');
    expect(await card().count()).toBe(0);
    await shoot('approval-outcome');
  });

  it('the tab list marks a tab that starts waiting while another tab is open', async () => {
    const quiet = (await (
      await fetch(`${app.product.url}/v1/tabs`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ title: 'looking here' }),
      })
    ).json()) as { tab: Tab };
    await openTab(quiet.tab.id);
    await page.getByRole('navigation', { name: 'Your tabs' }).getByText('looking here').waitFor();
    const { tab } = await waitingTab('paused elsewhere');
    // What the page does when it is looked at again (and every 15 s while it is).
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    const item = page
      .getByRole('navigation', { name: 'Your tabs' })
      .getByRole('listitem')
      .filter({ hasText: 'paused elsewhere' });
    await item.getByTestId('tab-waiting').waitFor({ timeout: 5_000 });
    await fetch(`${app.product.url}/v1/tabs/${tab.id}/cancel`, { method: 'POST' });
  });

  it('a message sent while a call waits denies it and is answered', async () => {
    const { tab, callId } = await waitingTab('interrupt me');
    await openTab(tab.id);
    await card().waitFor();
    await page.fill('#composer-text', 'never mind, just say hi');
    await page.keyboard.press('Enter');
    await outcome().waitFor({ timeout: 15_000 });
    expect((await outcome().textContent())?.trim()).toContain('Denied: interrupted');
    const { decision } = await resultOf(tab.id, callId);
    expect(decision).toMatchObject({ decision: 'deny', reason: 'interrupted' });
  });
});

/**
 * With SCREENSHOT_DIR set, the page in the light and the dark theme (to look at the card by
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
