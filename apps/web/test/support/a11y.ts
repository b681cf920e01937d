/**
 * Accessibility measured with axe-core in Chromium, on the app's screens: the welcome screen,
 * a chat with thinking and a tool call, the context inspector and the API key form. Shared by
 * the browser test (which asserts none) and the web bench (`web.a11y.violations.serious`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';

const require = createRequire(import.meta.url);
/** axe's browser build, evaluated in the page through the driver (the page's CSP does not apply). */
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export type A11yViolation = {
  screen: string;
  id: string;
  impact: string;
  help: string;
  nodes: string[];
};

/** The serious and critical violations axe finds on the page as it is now. */
export async function seriousViolations(page: Page, screen: string): Promise<A11yViolation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: AxeLike }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? 'unknown',
      help: violation.help,
      nodes: violation.nodes.map((node) => node.target.join(' ')),
    }));
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({ screen, ...violation }));
}

type AxeLike = {
  run(
    context: Document,
    options: { resultTypes: string[] },
  ): Promise<{
    violations: {
      id: string;
      impact?: string | null;
      help: string;
      nodes: { target: string[] }[];
    }[];
  }>;
};

/** A tab with a thinking block and a tool call in it, made through the API (auth off). */
async function toolTab(url: string): Promise<string> {
  const created = await fetch(`${url}/v1/tabs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'tools', config: { thinking: { budgetTokens: 2048 } } }),
  });
  const tabId = ((await created.json()) as { tab: { id: string } }).tab.id;
  await fetch(`${url}/v1/tabs/${tabId}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      text: '[[sim: think "plan first"]] [[sim: tool calculator {"expression":"6*7"}]]',
    }),
  });
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const response = await fetch(`${url}/v1/tabs/${tabId}`);
    const { tab } = (await response.json()) as { tab: { status: string; lastSeq: number } };
    if (tab.status === 'idle' && tab.lastSeq >= 4) return tabId;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`tab ${tabId} did not finish its turn`);
}

/**
 * Walks the four screens in a fresh context (`options`: a viewport, a colour scheme) and returns
 * every serious or critical violation found, by screen.
 */
export async function measureScreens(
  browser: Browser,
  url: string,
  options: BrowserContextOptions = {},
): Promise<A11yViolation[]> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, ...options });
  try {
    const page = await context.newPage();
    const found: A11yViolation[] = [];
    const tabId = await toolTab(url);

    await page.goto(url);
    await page.getByRole('heading', { name: 'Welcome to chunklog' }).waitFor();
    found.push(...(await seriousViolations(page, 'welcome')));

    await page.goto(`${url}/#/tabs/${tabId}`);
    await page.reload();
    await page.waitForSelector('[data-testid=tool-result]');
    await page.waitForSelector('[data-testid=thinking]');
    found.push(...(await seriousViolations(page, 'chat')));

    await page.getByRole('button', { name: 'Context', exact: true }).click();
    await page.waitForSelector('[data-testid=breakpoint-count]');
    found.push(...(await seriousViolations(page, 'context panel')));

    // The key form, as the app shows it when the server answers 401.
    await page.route(
      (address) => address.pathname === '/v1/tabs',
      (route) =>
        route.fulfill({
          status: 401,
          contentType: 'application/json',
          body: JSON.stringify({ error: { code: 'unauthorized', message: 'API key required' } }),
        }),
    );
    await page.goto(url);
    await page.getByLabel('API key', { exact: true }).waitFor();
    found.push(...(await seriousViolations(page, 'key form')));
    return found;
  } finally {
    await context.close();
  }
}
