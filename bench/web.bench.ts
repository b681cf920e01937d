/**
 * The chat in Chromium (`npm run bench web`): the JS heap and DOM of scrolling a deep tab to its
 * first chunk and back, with the window's limits and without them in the same run; long tasks
 * while an answer streams; the heap of the app showing a shallow tab, above which the heaps are
 * compared too, and of an empty page, the part of every heap that is not the app's; and how
 * long a deep tab takes to show its last page against a shallow one; and the serious and
 * critical accessibility violations axe-core finds on the app's screens; and how soon an
 * interrupting message's answer starts against a message sent to an idle tab. The product runs
 * as `npm start` does, on tabs seeded through the store API.
 *
 * `BENCH_WEB_SECTIONS=a11y npm run bench web.bench` runs only the named sections (`memory`:
 * the scrolls and heaps, `paint`, `stream`, `a11y`, `interrupt`), comma-separated; default all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { measureScreens } from '../apps/web/test/support/a11y';
import { launchChromium } from '../apps/web/test/support/browser';
import { ApiReader, createTabInPage } from '../apps/web/test/support/chat-page';
import { type Product, startProduct } from '../apps/web/test/support/product';
import { seedTabs } from '../apps/web/test/support/seed';
import { median } from './percentile';

const DEEP = 100_000;
const LONG_TURN = 20_000;
const SHALLOW = 10;
/** Pages of the API's largest size, so a scroll through 100,000 chunks takes 200 of them. */
const PAGE = 500;
const STREAM_SECONDS = 30;
/**
 * Streaming runs per CPU rate, whose median is the figure: one run's count swings with what else
 * the machine runs (`BENCH_WEB_STREAM_RUNS` overrides it).
 */
const STREAM_RUNS = Number(process.env.BENCH_WEB_STREAM_RUNS ?? 5);
/** The CPU slowdown of the second streaming run. */
const SLOWDOWN = 4;
/** Samples of each of the two sends the interrupt section times (after one discarded pair). */
const INTERRUPT_SAMPLES = 9;
const SECTIONS = ['memory', 'paint', 'stream', 'a11y', 'interrupt'] as const;
type Section = (typeof SECTIONS)[number];

function sectionsToRun(): Set<Section> {
  const named = process.env.BENCH_WEB_SECTIONS?.split(',').map((name) => name.trim());
  if (!named?.length || named.every((name) => name === '')) return new Set(SECTIONS);
  for (const name of named) {
    if (!SECTIONS.includes(name as Section)) {
      throw new Error(`BENCH_WEB_SECTIONS: no section ${name} (${SECTIONS.join(', ')})`);
    }
  }
  return new Set(named as Section[]);
}

async function heapMb(page: Page): Promise<number> {
  const session = await page.context().newCDPSession(page);
  await session.send('HeapProfiler.collectGarbage');
  const { usedSize } = await session.send('Runtime.getHeapUsage');
  await session.detach();
  return usedSize / 2 ** 20;
}

const domNodes = (page: Page) => page.evaluate(() => document.getElementsByTagName('*').length);

const seqsOnScreen = (page: Page) =>
  page.$$eval('[data-testid=text]', (elements) =>
    elements.map((element) => Number((element as HTMLElement).dataset.seq)),
  );

/** Opens the tab and waits for its last chunk on screen; ms from navigation to that moment. */
async function openTab(page: Page, url: string, lastSeq: number): Promise<number> {
  await page.goto(url);
  await page.waitForSelector(`[data-seq="${lastSeq}"]`, { timeout: 120_000 });
  return page.evaluate(() => performance.now());
}

/** Scrolls to seq 1 and back to `lastSeq`; the heap after it and the DOM's peak node count. */
async function scrollThrough(
  browser: Browser,
  url: string,
  lastSeq: number,
): Promise<{ heapMb: number; peakNodes: number }> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  await openTab(page, url, lastSeq);
  let peakNodes = await domNodes(page);
  while (!(await seqsOnScreen(page)).includes(1)) {
    await page.evaluate(() => {
      const viewport = document.querySelector('[role=log]');
      if (viewport) viewport.scrollTop = 0;
    });
    await page.waitForTimeout(20);
    peakNodes = Math.max(peakNodes, await domNodes(page));
  }
  await page.focus('[role=log]');
  while (!(await seqsOnScreen(page)).includes(lastSeq)) {
    await page.keyboard.press('End');
    await page.waitForTimeout(20);
    peakNodes = Math.max(peakNodes, await domNodes(page));
  }
  const heap = await heapMb(page);
  await page.close();
  console.log(`${url}: ${heap.toFixed(1)} MB, ${peakNodes} nodes at most`);
  return { heapMb: heap, peakNodes };
}

/**
 * The heap of the app showing a shallow tab: its code, styles and DOM, what every figure above
 * holds whatever the window does, so the windows can also be compared above it.
 */
async function baselineHeapMb(browser: Browser, url: string, lastSeq: number): Promise<number> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  await openTab(page, url, lastSeq);
  const heap = await heapMb(page);
  await page.close();
  return heap;
}

/**
 * The heap of a page holding one element, opened and waited for as a tab is: what the browser
 * and the test driver's injected scripts hold in every figure above, whatever the app holds.
 */
async function emptyPageHeapMb(browser: Browser): Promise<number> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  await openTab(page, 'data:text/html,<p data-seq="1">1</p>', 1);
  const heap = await heapMb(page);
  await page.close();
  return heap;
}

/**
 * Main-thread tasks over 50 ms while an answer streams at 200 tokens/s, on this machine's CPU
 * slowed down `slowdown` times (a slower device: what each frame costs shows sooner).
 */
async function longTasksWhileStreaming(
  browser: Browser,
  url: string,
  slowdown = 1,
): Promise<number[]> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  if (slowdown > 1) {
    const session = await page.context().newCDPSession(page);
    await session.send('Emulation.setCPUThrottlingRate', { rate: slowdown });
  }
  await page.goto(url);
  await page.evaluate(() => {
    const tasks: number[] = [];
    (window as { __longTasks?: number[] }).__longTasks = tasks;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) tasks.push(entry.duration);
    }).observe({ type: 'longtask' });
  });
  await page.fill('#new-tab-title', 'streaming');
  await page.click('button:has-text("New tab")');
  await page.waitForSelector('[data-testid=connection]:has-text("Live")');
  await page.fill('#composer-text', `[[sim: words ${STREAM_SECONDS * 200}]] [[sim: rate 200]]`);
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid=open-text]');
  await page.waitForSelector('[data-testid=open-text]', {
    state: 'detached',
    timeout: (STREAM_SECONDS + 60) * 1000,
  });
  const tasks = await page.evaluate(() => (window as { __longTasks?: number[] }).__longTasks!);
  await page.close();
  return tasks;
}

/**
 * The median count of long tasks over `STREAM_RUNS` streaming runs; each run's tasks (ms) and
 * the machine's load average are logged, so a run's count can be told from the machine's load.
 */
async function medianLongTasks(browser: Browser, url: string, slowdown = 1): Promise<number> {
  const counts: number[] = [];
  for (let run = 1; run <= STREAM_RUNS; run += 1) {
    const tasks = await longTasksWhileStreaming(browser, url, slowdown);
    counts.push(tasks.length);
    const durations = tasks.map((ms) => Math.round(ms)).join(' ');
    console.log(
      `stream cpu ${slowdown}x run ${run}: ${tasks.length} long tasks [${durations}] load ${loadavg()[0]!.toFixed(2)}`,
    );
  }
  return median(counts);
}

/**
 * Arms the page's probe: it notes when Enter goes down in the composer (the send) and when a text
 * block that is not open now first shows text on screen (the new answer's first delta), both on
 * the page's clock.
 */
function armFirstDeltaProbe(page: Page): Promise<void> {
  return page.evaluate(() => {
    const ignored = new Set(
      [...document.querySelectorAll<HTMLElement>('[data-testid=open-text]')].map(
        (element) => element.dataset.chunkId,
      ),
    );
    const probe: { sentAt: number | null; firstDeltaAt: number | null } = {
      sentAt: null,
      firstDeltaAt: null,
    };
    (window as { __probe?: typeof probe }).__probe = probe;
    // No named functions in here: the bundler would wrap them in a helper the page lacks.
    document.addEventListener(
      'keydown',
      (event) => {
        if (event.key === 'Enter' && probe.sentAt === null) probe.sentAt = performance.now();
      },
      true,
    );
    const observer = new MutationObserver(() => {
      for (const element of document.querySelectorAll<HTMLElement>('[data-testid=open-text]')) {
        if (ignored.has(element.dataset.chunkId) || !element.textContent?.trim()) continue;
        probe.firstDeltaAt = performance.now();
        observer.disconnect();
        return;
      }
    });
    observer.observe(document.body, { childList: true, subtree: true, characterData: true });
  });
}

/** Sends `text` from the composer and returns ms from Enter to the new answer's first text. */
async function sendToFirstDelta(page: Page, text: string): Promise<number> {
  await page.fill('#composer-text', text);
  await armFirstDeltaProbe(page);
  await page.keyboard.press('Enter');
  const handle = await page.waitForFunction(
    () => {
      const probe = (window as { __probe?: { sentAt: number | null; firstDeltaAt: number | null } })
        .__probe;
      return probe?.sentAt != null && probe.firstDeltaAt != null
        ? probe.firstDeltaAt - probe.sentAt
        : null;
    },
    undefined,
    { timeout: 30_000, polling: 20 },
  );
  return (await handle.jsonValue()) as number;
}

/**
 * Ms from sending a message to its answer's first text on screen, on an idle tab and as an
 * interrupting message (mode Interrupt, the default) during a streaming text answer, taken in
 * turns on one tab: each pair sends a long answer's message to the idle tab (timed), waits
 * until its text streams, sends the interrupting one (timed), then stops the turn and waits
 * for the tab to be idle. Both answers stream at the same pace.
 */
async function interruptLatency(
  browser: Browser,
  url: string,
): Promise<{ message: number[]; interrupt: number[] }> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  await page.goto(url);
  const api = new ApiReader(url);
  const tabId = await createTabInPage(page, 'interrupt');
  const message: number[] = [];
  const interrupt: number[] = [];
  const answer = '[[sim: words 3000]] [[sim: rate 200]]';
  for (let run = 0; run <= INTERRUPT_SAMPLES; run += 1) {
    const idleMs = await sendToFirstDelta(page, `Tell me a long story (${run}). ${answer}`);
    await page.waitForFunction(
      () => (document.querySelector('[data-testid=open-text]')?.textContent?.length ?? 0) > 200,
      undefined,
      { timeout: 30_000 },
    );
    const interruptMs = await sendToFirstDelta(page, `Stop, another one (${run}). ${answer}`);
    // The first pair warms the page, the worker and the simulator up.
    if (run > 0) {
      message.push(idleMs);
      interrupt.push(interruptMs);
    }
    const lastSeq = (await api.tab(tabId)).lastSeq;
    await fetch(`${url}/v1/tabs/${tabId}/cancel`, { method: 'POST' });
    await api.idle(tabId, lastSeq + 1);
    await page.waitForSelector('[data-testid=open-text]', { state: 'detached' });
  }
  await page.close();
  // What was timed was an interrupt: each interrupting message joined the turn of the message
  // before it, after that answer's text was cut.
  const log = await api.chunks(tabId);
  for (let run = 0; run <= INTERRUPT_SAMPLES; run += 1) {
    const user = (prefix: string) =>
      log.find(
        (chunk) => chunk.type === 'text' && chunk.data.text.startsWith(`${prefix} (${run})`),
      );
    const opener = user('Tell me a long story');
    const interrupting = user('Stop, another one');
    const cut = log.find(
      (chunk) =>
        chunk.turnId === opener?.turnId &&
        chunk.role === 'assistant' &&
        chunk.type === 'text' &&
        chunk.data.interrupted === true &&
        chunk.seq < (interrupting?.seq ?? 0),
    );
    if (!opener || interrupting?.turnId !== opener.turnId || !cut) {
      throw new Error(`pair ${run} was not an interrupt: ${JSON.stringify(log.slice(-8))}`);
    }
  }
  return { message, interrupt };
}

/**
 * Serious and critical axe-core violations (rules broken, summed over the screens) on the
 * welcome screen, a chat with thinking and a tool call, the context inspector and the key form.
 */
async function a11yViolations(browser: Browser, url: string): Promise<number> {
  const found = await measureScreens(browser, url);
  for (const violation of found) {
    console.log(
      `${violation.screen}: ${violation.id} (${violation.impact}) ${violation.nodes.join(', ')}`,
    );
  }
  return found.length;
}

export default async function webBench(): Promise<Record<string, number>> {
  const sections = sectionsToRun();
  const dataDir = mkdtempSync(join(tmpdir(), 'chunklog-web-bench-'));
  let product: Product | null = null;
  let browser: Browser | null = null;
  try {
    const seeded = sections.has('memory') || sections.has('paint');
    let deep = '';
    let longTurn = '';
    let shallow = '';
    if (seeded) {
      const started = Date.now();
      [deep, longTurn, shallow] = (await seedTabs(dataDir, [
        { title: 'deep', depth: DEEP },
        { title: 'one long turn', depth: LONG_TURN, turnLength: LONG_TURN },
        { title: 'shallow', depth: SHALLOW },
      ])) as [string, string, string];
      console.log(`seeded ${DEEP + LONG_TURN + SHALLOW} chunks in ${Date.now() - started} ms`);
    }
    [product, browser] = await Promise.all([startProduct({ dataDir }), launchChromium()]);
    const url = product.url;
    const tabUrl = (tabId: string, query = '') => `${url}/?page=${PAGE}${query}#/tabs/${tabId}`;
    const figures: Record<string, number> = {};

    if (sections.has('memory')) {
      const deepScroll = await scrollThrough(browser, tabUrl(deep), DEEP);
      const deepUnbounded = await scrollThrough(browser, tabUrl(deep, '&window=unbounded'), DEEP);
      const turn = await scrollThrough(browser, tabUrl(longTurn), LONG_TURN);
      const turnUnbounded = await scrollThrough(
        browser,
        tabUrl(longTurn, '&window=unbounded'),
        LONG_TURN,
      );
      const baseline = await baselineHeapMb(browser, tabUrl(shallow), SHALLOW);
      const emptyPage = await emptyPageHeapMb(browser);
      const aboveBaseline = (bounded: number, unbounded: number) =>
        (bounded - baseline) / (unbounded - baseline);
      Object.assign(figures, {
        'web.heap_mb.deep_scroll': deepScroll.heapMb,
        'web.heap_mb.unbounded': deepUnbounded.heapMb,
        'web.heap_ratio.deep_scroll': deepScroll.heapMb / deepUnbounded.heapMb,
        'web.heap_ratio.deep_scroll_above_baseline': aboveBaseline(
          deepScroll.heapMb,
          deepUnbounded.heapMb,
        ),
        'web.dom_nodes.deep_scroll': deepScroll.peakNodes,
        'web.dom_nodes.unbounded': deepUnbounded.peakNodes,
        'web.heap_mb.long_turn': turn.heapMb,
        'web.heap_mb.long_turn_unbounded': turnUnbounded.heapMb,
        'web.heap_ratio.long_turn': turn.heapMb / turnUnbounded.heapMb,
        'web.heap_mb.app_baseline': baseline,
        'web.heap_mb.empty_page': emptyPage,
        'web.heap_ratio.long_turn_above_baseline': aboveBaseline(turn.heapMb, turnUnbounded.heapMb),
      });
    }

    if (sections.has('paint')) {
      const paint = async (tabId: string, lastSeq: number) => {
        const times: number[] = [];
        for (let run = 0; run < 5; run += 1) {
          const page = await browser!.newPage({ viewport: { width: 1200, height: 800 } });
          times.push(await openTab(page, `${url}/#/tabs/${tabId}`, lastSeq));
          await page.close();
        }
        return median(times);
      };
      const deepPaint = await paint(deep, DEEP);
      const shallowPaint = await paint(shallow, SHALLOW);
      Object.assign(figures, {
        'web.first_paint_ms.deep_tab': deepPaint,
        'web.first_paint_ms.shallow_tab': shallowPaint,
        'web.first_paint_ratio.deep_over_shallow': deepPaint / shallowPaint,
      });
    }

    if (sections.has('stream')) {
      figures['web.stream.long_tasks'] = await medianLongTasks(browser, url);
      figures['web.stream.long_tasks_cpu_4x'] = await medianLongTasks(browser, url, SLOWDOWN);
    }

    if (sections.has('a11y')) {
      figures['web.a11y.violations.serious'] = await a11yViolations(browser, url);
    }

    if (sections.has('interrupt')) {
      const { message, interrupt } = await interruptLatency(browser, url);
      console.log(`message ms: ${message.map(Math.round).join(', ')}`);
      console.log(`interrupt ms: ${interrupt.map(Math.round).join(', ')}`);
      Object.assign(figures, {
        'web.message_ms.p50': median(message),
        'web.interrupt_ms.p50': median(interrupt),
        'web.interrupt_ms.p50_ratio': median(interrupt) / median(message),
      });
    }
    return figures;
  } finally {
    await browser?.close();
    await product?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
