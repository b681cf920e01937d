/** One event of a tab's SSE stream, with the time it arrived. */
export interface SeenEvent {
  event: string;
  data: Record<string, unknown>;
  id?: string;
  at: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Splits `text/event-stream` text into events; returns them and the unfinished rest. */
function parseFrames(buffer: string): { events: Omit<SeenEvent, 'at'>[]; rest: string } {
  const frames = buffer.split('\n\n');
  const rest = frames.pop() ?? '';
  const events = frames.flatMap((frame) => {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of frame.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length === 0) return [];
    return [{ event, data: JSON.parse(data.join('\n')) as Record<string, unknown>, id }];
  });
  return { events, rest };
}

/**
 * A client of one tab's SSE stream, as a browser's EventSource behaves: when the connection
 * ends or fails it reconnects with `Last-Event-ID`, for as long as it is not stopped. Every event
 * is kept, duplicates included, so a test can say whether each seq arrived exactly once.
 */
export class TabWatcher {
  readonly events: SeenEvent[] = [];
  connections = 0;
  private lastId: string | undefined;
  private current: AbortController | null = null;
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly gatewayUrls: readonly string[],
    private readonly tabId: string,
    private readonly apiKey: string,
  ) {
    this.loop = this.run();
  }

  /** The seqs of every `chunk-seal` seen, in arrival order. */
  seals(): number[] {
    return this.events.filter((e) => e.event === 'chunk-seal').map((e) => Number(e.id));
  }

  /** The `turn-done` events seen. */
  turnsDone(): SeenEvent[] {
    return this.events.filter((e) => e.event === 'turn-done');
  }

  /** Drops the connection; the watcher reconnects and resumes after the last seq it saw. */
  dropConnection(): void {
    this.current?.abort();
  }

  /** Resolves with the first event (from `from` on) that `match` accepts. */
  async waitFor(
    match: (event: SeenEvent) => boolean,
    timeoutMs: number,
    from = 0,
  ): Promise<SeenEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(from).find(match);
      if (found) return found;
      if (Date.now() > deadline) {
        const seen = this.events.map((e) => e.event).join(' ');
        throw new Error(`tab ${this.tabId}: no matching event in ${timeoutMs} ms; seen: ${seen}`);
      }
      await sleep(50);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      // Successive connections go round the gateways, as a load balancer would send them.
      const gateway = this.gatewayUrls[this.connections % this.gatewayUrls.length]!;
      this.connections += 1;
      this.current = new AbortController();
      try {
        const response = await fetch(`${gateway}/v1/tabs/${this.tabId}/events`, {
          headers: {
            authorization: `Bearer ${this.apiKey}`,
            accept: 'text/event-stream',
            ...(this.lastId ? { 'last-event-id': this.lastId } : {}),
          },
          signal: this.current.signal,
        });
        if (!response.ok || !response.body) throw new Error(`status ${response.status}`);
        const decoder = new TextDecoder();
        let buffer = '';
        for await (const piece of response.body) {
          buffer += decoder.decode(piece as Uint8Array, { stream: true });
          const { events, rest } = parseFrames(buffer);
          buffer = rest;
          for (const event of events) {
            this.events.push({ ...event, at: Date.now() });
            if (event.id !== undefined) this.lastId = event.id;
          }
        }
      } catch {
        // Dropped, refused or aborted: reconnect below unless stopped.
      }
      if (!this.stopped) await sleep(250);
    }
  }
}

/** The gateway's HTTP API, as a client with one API key uses it. */
export class GatewayClient {
  constructor(
    readonly url: string,
    private readonly apiKey: string,
  ) {}

  private async call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }

  async createTab(title: string): Promise<string> {
    return (await this.call<{ tab: { id: string } }>('POST', '/v1/tabs', { title })).tab.id;
  }

  /**
   * Sends a message in `enqueue` mode; resolves with the accepted chunk's id. With the same
   * `idempotencyKey` a retry names the same chunk, which is queued once.
   */
  async send(tabId: string, text: string, idempotencyKey?: string): Promise<string> {
    const accepted = await this.call<{ chunkId: string }>(
      'POST',
      `/v1/tabs/${tabId}/messages`,
      { text, mode: 'enqueue' },
      idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
    );
    return accepted.chunkId;
  }

  /** The tab's status and running turn. */
  async tab(tabId: string): Promise<{ status: string; activeTurnId: string | null }> {
    return (
      await this.call<{ tab: { status: string; activeTurnId: string | null } }>(
        'GET',
        `/v1/tabs/${tabId}`,
      )
    ).tab;
  }

  /** Every chunk of the tab, in seq order. */
  async log(tabId: string): Promise<{ id: string; seq: number; kind: string }[]> {
    const chunks: { id: string; seq: number; kind: string }[] = [];
    for (;;) {
      const after = chunks.at(-1)?.seq ?? 0;
      const page = await this.call<{ chunks: typeof chunks; hasMore: boolean }>(
        'GET',
        `/v1/tabs/${tabId}/chunks?limit=200&after=${after}`,
      );
      chunks.push(...page.chunks);
      if (!page.hasMore) return chunks;
    }
  }
}

/** Polls `url` until it answers 200; resolves with the time that took. */
export async function waitUntilOk(url: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${url} not ready in ${timeoutMs} ms`);
    await sleep(250);
  }
}

/** Whether `seqs` holds each of 1..max exactly once. */
export function exactlyOnce(seqs: readonly number[]): { duplicates: number; missing: number } {
  const unique = new Set(seqs);
  const max = Math.max(0, ...seqs);
  let missing = 0;
  for (let seq = 1; seq <= max; seq += 1) if (!unique.has(seq)) missing += 1;
  return { duplicates: seqs.length - unique.size, missing };
}
