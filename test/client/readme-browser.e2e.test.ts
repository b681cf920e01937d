/**
 * The README's browser chat, as written, in Debian's Chromium (playwright-core, no browser
 * download) against the real gateway: bundled by Vite from this package, served on the
 * gateway's origin (as a page the gateway serves would be), streamed over fetch.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chromiumInstalled,
  chromiumPath,
  launchChromium,
  servePage,
} from '../../packages/client/src/testing/browser';
import { type RealGateway, startRealGateway } from '../support/real-gateway';

const packageRoot = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'packages',
  'client',
);

if (!chromiumInstalled()) {
  console.warn(`\n!!! SKIPPED: the README browser test needs Chromium at ${chromiumPath}\n`);
}

describe.skipIf(!chromiumInstalled())("the README's browser chat", () => {
  let gateway: RealGateway;
  let browser: Browser;
  let folder: string;

  beforeAll(async () => {
    gateway = await startRealGateway();
    folder = mkdtempSync(join(tmpdir(), 'chunklog-client-readme-'));
    const readme = readFileSync(join(packageRoot, 'README.md'), 'utf8');
    const page = /```html\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    writeFileSync(join(folder, 'index.html'), page);
    await build({
      configFile: false,
      root: folder,
      base: '/readme/',
      logLevel: 'warn',
      resolve: { alias: { '@chunklog/client': join(packageRoot, 'src', 'index.ts') } },
      build: { outDir: join(folder, 'dist') },
    });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('sends a message and shows the answer as it streams', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // The built page is served on the gateway's origin; /v1 goes to the gateway itself.
    await servePage(page, { origin: gateway.url, base: '/readme/', folder: join(folder, 'dist') });
    // The page sets its submit handler in the same task that opens the view, whose first
    // request is the tail page: once that is sent, Enter is handled by the page's script.
    const ready = page.waitForRequest((request) => request.url().includes('/chunks'));
    await page.goto(`${gateway.url}/readme/index.html`);
    await ready;
    await page.getByLabel('Message').fill('[[sim: words 60]] [[sim: rate 40]] hello');
    await page.getByLabel('Message').press('Enter');
    const log = page.locator('#log');
    await expect.poll(() => log.textContent(), { timeout: 20_000 }).toMatch(/^user: /);
    // Part of the answer shows before its end: it streams in.
    await expect
      .poll(async () => (await log.textContent())?.split('\n')[1]?.split(' ').length ?? 0, {
        timeout: 20_000,
        interval: 50,
      })
      .toBeGreaterThan(3);
    const partial = (await log.textContent()) ?? '';
    await expect
      .poll(async () => (await log.textContent())?.split('\n')[1]?.split(' ').length ?? 0, {
        timeout: 20_000,
      })
      .toBe(61);
    expect(partial.split('\n')[1]?.split(' ').length).toBeLessThan(61);
    expect(errors).toEqual([]);
    await page.close();
  });
});
