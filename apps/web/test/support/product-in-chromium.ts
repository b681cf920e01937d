import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from './browser';
import { ApiReader } from './chat-page';
import { type Product, startProduct } from './product';

/** The product and Chromium a suite shares, ready from its `beforeAll` on. */
export interface ProductInChromium {
  readonly product: Product;
  readonly browser: Browser;
  readonly api: ApiReader;
}

/**
 * Starts the product (`npm start`) and Chromium once for the calling suite, and stops both after
 * it: the suite reads them through the returned object once its tests run.
 */
export function useProductInChromium(): ProductInChromium {
  let started: { product: Product; browser: Browser; api: ApiReader } | undefined;
  beforeAll(async () => {
    const [product, browser] = await Promise.all([startProduct(), launchChromium()]);
    started = { product, browser, api: new ApiReader(product.url) };
  });
  afterAll(async () => {
    await started?.browser.close();
    await started?.product.stop();
  });
  const get = () => {
    if (!started) throw new Error('the product and Chromium start in beforeAll');
    return started;
  };
  return {
    get product() {
      return get().product;
    },
    get browser() {
      return get().browser;
    },
    get api() {
      return get().api;
    },
  };
}
