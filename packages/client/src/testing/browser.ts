import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`), driven by playwright-core: no download. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function chromiumInstalled(): boolean {
  return existsSync(chromiumPath);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
}

/**
 * Serves the files of a built page under `${origin}${base}` in `page` (as if the gateway served
 * it: same origin, no CORS), whatever else that origin serves.
 */
export async function servePage(
  page: Page,
  options: { origin: string; base: string; folder: string },
): Promise<void> {
  await page.route(`${options.origin}${options.base}**`, (route) => {
    const path = new URL(route.request().url()).pathname.slice(options.base.length);
    const file = join(options.folder, path || 'index.html');
    return existsSync(file)
      ? route.fulfill({
          body: readFileSync(file),
          contentType: file.endsWith('.js') ? 'text/javascript' : 'text/html',
        })
      : route.fulfill({ status: 404 });
  });
}
