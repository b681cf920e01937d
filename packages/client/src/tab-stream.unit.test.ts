import { describe, expect, it } from 'vitest';
import { ChunklogClient } from './client';
import { sealedText, testTabId } from './testing/sealed-text';

const tabId = testTabId;

function sealText(seq: number): string {
  const chunk = sealedText(seq, 'user', `message ${seq}`);
  return `event: chunk-seal\nid: ${seq}\ndata: ${JSON.stringify({ tabId, chunk })}\n\n`;
}

const liveText = `event: stream-live\ndata: ${JSON.stringify({ tabId, after: 0, status: 'idle', activeTurnId: null })}\n\n`;

/** A fetch that answers each stream request with the next scripted answer, and records them. */
function scriptedFetch(answers: Array<() => Response | Promise<Response>>) {
  const requests: Array<{ url: URL; headers: Record<string, string>; at: number }> = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    requests.push({
      url: new URL(String(input)),
      headers: (init?.headers ?? {}) as Record<string, string>,
      at: performance.now(),
    });
    const answer = answers.shift();
    if (answer === undefined) return new Promise<Response>(() => {});
    return answer();
  };
  return { fetch: fetch as typeof globalThis.fetch, requests };
}

/** An SSE response that sends `text`, then ends (the connection closes). */
const sse = (text: string) =>
  new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } });

describe('TabStream (scripted server)', () => {
  it('resumes after the last seq it delivered, by ?after= and Last-Event-ID', async () => {
    const { fetch, requests } = scriptedFetch([
      () => sse(liveText + sealText(6) + sealText(7)),
      () => sse(sealText(7) + sealText(8) + liveText),
    ]);
    const client = new ChunklogClient({ baseUrl: 'http://gateway.test', fetch });
    const stream = client.stream(tabId, { after: 5, backoff: { initialMs: 1, maxMs: 1 } });
    const seqs: number[] = [];
    for await (const event of stream) {
      if (event.event === 'chunk-seal') seqs.push(event.data.chunk.seq);
      if (seqs.length === 3) break;
    }
    expect(seqs).toEqual([6, 7, 8]);
    expect(requests.map((request) => request.url.searchParams.get('after'))).toEqual(['5', '7']);
    expect(requests.map((request) => request.headers['last-event-id'])).toEqual(['5', '7']);
    expect(stream.state).toBe('closed');
  });

  it('backs off exponentially with jitter between failed connections, and honours Retry-After', async () => {
    const refused = () => Promise.reject(new TypeError('fetch failed'));
    const busy = () =>
      new Response('{"error":{"code":"rate_limited","message":"slow down"}}', {
        status: 429,
        headers: { 'retry-after': '1' },
      });
    const { fetch, requests } = scriptedFetch([refused, refused, refused, refused, busy, refused]);
    const draws = [0, 1, 0, 1, 0, 0];
    const client = new ChunklogClient({ baseUrl: 'http://gateway.test', fetch });
    const stream = client.stream(tabId, {
      backoff: { initialMs: 40, maxMs: 160, random: () => draws.shift() ?? 0 },
    });
    const states: string[] = [];
    stream.on('state', (state) => states.push(state));
    stream.start();
    while (requests.length < 7) await new Promise((resolve) => setTimeout(resolve, 10));
    stream.close();
    const gaps = requests.slice(1).map((request, index) => request.at - (requests[index]?.at ?? 0));
    // Steps 40, 80, 160, 160 (capped); half fixed, half drawn: 20, 80, 80, 160; then Retry-After.
    const expected = [20, 80, 80, 160, 1_000, 80];
    gaps.forEach((gap, index) => {
      expect(gap, `gap ${index}`).toBeGreaterThanOrEqual((expected[index] ?? 0) - 2);
      expect(gap, `gap ${index}`).toBeLessThan((expected[index] ?? 0) + 500);
    });
    expect(states).toEqual(['connecting', 'reconnecting', 'closed']);
  });

  it('backs off from the start again after a connection that delivered something', async () => {
    const refused = () => Promise.reject(new TypeError('fetch failed'));
    const { fetch, requests } = scriptedFetch([
      refused,
      refused,
      refused,
      () => sse(sealText(1)),
      refused,
    ]);
    const client = new ChunklogClient({ baseUrl: 'http://gateway.test', fetch });
    const stream = client.stream(tabId, {
      backoff: { initialMs: 200, maxMs: 4_000, random: () => 0 },
    });
    stream.start();
    while (requests.length < 6) await new Promise((resolve) => setTimeout(resolve, 10));
    stream.close();
    const gaps = requests.slice(1).map((request, index) => request.at - (requests[index]?.at ?? 0));
    // 100, 200, 400 while failing; after the seal 100 again (not 800), then 200.
    const expected = [100, 200, 400, 100, 200];
    gaps.forEach((gap, index) => {
      expect(gap, `gap ${index}`).toBeGreaterThanOrEqual((expected[index] ?? 0) - 2);
      expect(gap, `gap ${index}`).toBeLessThan((expected[index] ?? 0) + 350);
    });
  });
});
