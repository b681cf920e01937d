import type {
  ChunkPage,
  ChunkRole,
  ChunkType,
  MessageCommand,
  SearchHit,
  SearchPage,
  StepCacheMiss,
  Tab,
  TabConfig,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEventType,
  WireRequest,
} from '@chunklog/chunk-core';
import {
  type ApprovalDecision,
  ChunklogError,
  decisionsOf,
  errorFromResponse,
  isAbort,
  toChunklogError,
} from './errors';
import { TabStream, type TabStreamOptions } from './tab-stream';
import { TabView, type TabViewOptions } from './tab-view';

/** The WebSocket constructor to use (browsers' global one, or e.g. the `ws` package in Node). */
export type WebSocketConstructor = new (url: string) => WebSocket;

/** Options of a client. */
export interface ChunklogClientOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** An API key (`Authorization: Bearer`); leave it out when the server runs with auth off. */
  apiKey?: string;
  /** The fetch to use; the global one by default. */
  fetch?: typeof fetch;
  /** The WebSocket constructor for `transport: 'websocket'` streams; the global one by default. */
  WebSocket?: WebSocketConstructor;
  /** Epoch ms, for stream ticket expiry; `Date.now` by default. */
  clock?: () => number;
}

/** What a message does while a turn runs: stop it, queue behind it, or be refused (409). */
export type MessageMode = MessageCommand['mode'];

export interface CreateTabInput {
  title?: string;
  config?: TabConfig;
  /**
   * The same key on a retry returns the same tab instead of creating another; the key with
   * another title or config fails with `idempotency_key_reused` (422).
   */
  idempotencyKey?: string;
}

export interface TabList {
  tabs: Tab[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface SendMessageInput {
  text: string;
  /** `interrupt` (the default), `enqueue` or `reject`. */
  mode?: MessageMode;
  /**
   * The same key on a retry names the same message, so it is stored and run once; the key with
   * another text or mode fails with `idempotency_key_reused` (422).
   */
  idempotencyKey?: string;
}

export interface ForkInput {
  /** The seq the fork branches after: its history is the parent's up to it (it must end a step). */
  atSeq: number;
  title?: string;
  /** The same key on a retry returns the same fork instead of making another. */
  idempotencyKey?: string;
}

export interface EditInput {
  /** The seq of the user message to edit. */
  seq: number;
  /** The new text, sent in the fork where the message was. */
  text: string;
  title?: string;
  /** The same key on a retry answers the same fork and message. */
  idempotencyKey?: string;
}

export interface RegenerateInput {
  /** The seq of the user message whose answer is made again. */
  seq: number;
  title?: string;
  /** The same key on a retry answers the same fork and message. */
  idempotencyKey?: string;
}

/** A fork made for a message (edit, regenerate), and the id its user chunk will have. */
export interface ForkedMessage {
  tab: Tab;
  chunkId: string;
}

/** One decision on a call that waits for a person (`tab.waiting.calls`, `snapshot.waiting`). */
export type DecisionInput =
  | {
      callId: string;
      decision: 'approve';
      /** Run the tool with this input instead of the model's (checked against its input schema). */
      input?: Record<string, unknown>;
    }
  | {
      callId: string;
      decision: 'deny';
      /** Why: the model reads it in the call's error result. */
      reason?: string;
    };

export interface DecideOptions {
  /** The same key on a retry of the same decisions gets the same answer, stored once. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface CompactInput {
  /** Replace the tab's summarization instructions for this compaction. */
  instructions?: string;
  /** The same key on a retry names the same compaction, so the tab is compacted once. */
  idempotencyKey?: string;
}

export interface MessageAccepted {
  /** The id the message's user chunk will have. */
  chunkId: string;
  /** True when the gateway had accepted this message already (a retry with its key). */
  replayed: boolean;
}

/**
 * A page query: the tail by default, or the chunks before, after or around a seq (one of them).
 * `around` centres the page on the seq (a search hit), the chunk itself included.
 */
export type ChunkPageQuery = { limit?: number } & (
  | { before?: number; after?: never; around?: never }
  | { after?: number; before?: never; around?: never }
  | { around?: number; before?: never; after?: never }
);

/** A page read around a seq also tells whether more chunks lie before and after it. */
export type ChunkPageAround = ChunkPage & { hasMoreBefore: boolean; hasMoreAfter: boolean };

/** A search of your tabs (GET /v1/search); see the README for the query syntax. */
export interface SearchQuery {
  /** Words (all must match), "a phrase", `or`, `-word` to exclude; 1..500 characters. */
  q: string;
  tabId?: string;
  role?: ChunkRole;
  type?: ChunkType;
  /** Epoch ms: created at or after. */
  from?: number;
  /** Epoch ms: created before. */
  to?: number;
  /** 1..100, default 20. */
  limit?: number;
  /** The previous page's nextCursor. */
  cursor?: string;
}

export interface StreamTicket {
  ticket: string;
  /** Epoch ms after which the gateway refuses it. */
  expiresAt: number;
}

export interface TabContext {
  /** The Anthropic request the tab's next step would send, cache breakpoints included. */
  request: WireRequest;
  /** Whose options built it: a worker's, or the gateway's defaults when no worker answered. */
  source?: 'worker' | 'gateway-defaults';
  /** The tab's latest steps whose request missed the prompt cache, and why; oldest first. */
  cacheMisses: StepCacheMiss[];
}

export interface CreateWebhookInput {
  /** An http(s) URL the events are POSTed to. */
  url: string;
  eventTypes: WebhookEventType[];
}

/** An endpoint with its signing secret: only creation and rotation show the secret. */
export interface WebhookWithSecret {
  endpoint: WebhookEndpoint;
  /** `whsec_...`; verify requests with any Standard Webhooks library. */
  secret: string;
}

interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A typed client of the chunklog HTTP API. Works in browsers and Node (global fetch). */
export class ChunklogClient {
  readonly baseUrl: string;
  readonly apiKey: string | null;
  readonly clock: () => number;
  readonly WebSocket: WebSocketConstructor | null;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ChunklogClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey ?? null;
    this.clock = options.clock ?? Date.now;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new TypeError('no fetch: pass options.fetch');
    // Called through a wrapper: browsers refuse a fetch called with another `this`.
    this.fetchImpl = (input, init) => fetchImpl(input, init);
    this.WebSocket = options.WebSocket ?? (globalThis.WebSocket as WebSocketConstructor) ?? null;
  }

  /** Creates a tab. */
  async createTab(input: CreateTabInput = {}, signal?: AbortSignal): Promise<Tab> {
    const { idempotencyKey, ...body } = input;
    const answer = await this.exchange<{ tab: Tab }>('POST', '/v1/tabs', {
      body,
      headers: idempotencyHeaders(idempotencyKey),
      signal,
    });
    return answer.body.tab;
  }

  /** One page of your tabs, newest first. */
  listTabs(query: { limit?: number; cursor?: string } = {}, signal?: AbortSignal) {
    return this.request<TabList>('GET', '/v1/tabs', { query, signal });
  }

  /** Every tab, newest first, fetched a page at a time as you iterate. */
  async *tabs(query: { pageSize?: number } = {}, signal?: AbortSignal): AsyncGenerator<Tab> {
    let cursor: string | undefined;
    do {
      const page = await this.listTabs({ limit: query.pageSize, cursor }, signal);
      yield* page.tabs;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  /** A tab with its `status`, `activeTurnId`, `lastSeq` and `usage`. */
  async getTab(tabId: string, signal?: AbortSignal): Promise<Tab> {
    return (await this.request<{ tab: Tab }>('GET', tabPath(tabId), { signal })).tab;
  }

  /** Sets a tab's title; its log and config do not change. */
  async renameTab(tabId: string, title: string, signal?: AbortSignal): Promise<Tab> {
    const body = await this.request<{ tab: Tab }>('PATCH', tabPath(tabId), {
      body: { title },
      signal,
    });
    return body.tab;
  }

  /** Deletes a tab and its log. */
  async deleteTab(tabId: string, signal?: AbortSignal): Promise<void> {
    await this.request('DELETE', tabPath(tabId), { signal });
  }

  /**
   * Forks a tab after `atSeq`: a new tab whose history up to there is this one's, by reference
   * (the same chunk ids and seqs), with chunks of its own from `atSeq + 1`. A seq inside a model
   * step rejects with `invalid_input` (400) naming the nearest allowed seqs.
   */
  async fork(tabId: string, input: ForkInput, signal?: AbortSignal): Promise<Tab> {
    const { idempotencyKey, ...body } = input;
    const answer = await this.exchange<{ tab: Tab }>('POST', `${tabPath(tabId)}/forks`, {
      body,
      headers: idempotencyHeaders(idempotencyKey),
      signal,
    });
    return answer.body.tab;
  }

  /**
   * Edits an earlier user message: a fork before the message at `seq`, with `text` sent there.
   * The tab itself is untouched; open the returned `tab` to follow the new answer.
   */
  edit(tabId: string, input: EditInput, signal?: AbortSignal): Promise<ForkedMessage> {
    const { idempotencyKey, ...body } = input;
    return this.request<ForkedMessage>('POST', `${tabPath(tabId)}/edit`, {
      body,
      headers: idempotencyHeaders(idempotencyKey),
      signal,
    });
  }

  /**
   * Answers the user message at `seq` again: a fork before it, with the same text sent there
   * (its request reads the tab's prompt cache). The tab itself is untouched.
   */
  regenerate(tabId: string, input: RegenerateInput, signal?: AbortSignal): Promise<ForkedMessage> {
    const { idempotencyKey, ...body } = input;
    return this.request<ForkedMessage>('POST', `${tabPath(tabId)}/regenerate`, {
      body,
      headers: idempotencyHeaders(idempotencyKey),
      signal,
    });
  }

  /** One page of a tab's forks (its versions), newest first. */
  forks(
    tabId: string,
    query: { limit?: number; cursor?: string } = {},
    signal?: AbortSignal,
  ): Promise<TabList> {
    return this.request<TabList>('GET', `${tabPath(tabId)}/forks`, { query, signal });
  }

  /** Sends a user message; resolves once the gateway accepted it (202). */
  async sendMessage(
    tabId: string,
    input: SendMessageInput,
    signal?: AbortSignal,
  ): Promise<MessageAccepted> {
    const body = { text: input.text, ...(input.mode === undefined ? {} : { mode: input.mode }) };
    const answer = await this.exchange<{ chunkId: string }>('POST', `${tabPath(tabId)}/messages`, {
      body,
      headers: idempotencyHeaders(input.idempotencyKey),
      signal,
    });
    return {
      chunkId: answer.body.chunkId,
      replayed: answer.headers.get('idempotent-replayed') === 'true',
    };
  }

  /**
   * Compacts the tab now, as a turn of its own (409 while a turn runs); resolves once accepted
   * (202) with the id the compaction chunk will have.
   */
  compact(tabId: string, input: CompactInput = {}, signal?: AbortSignal) {
    const headers: Record<string, string> = {};
    if (input.idempotencyKey !== undefined) headers['idempotency-key'] = input.idempotencyKey;
    const body = input.instructions === undefined ? {} : { instructions: input.instructions };
    return this.request<MessageAccepted>('POST', `${tabPath(tabId)}/compact`, {
      body,
      headers,
      signal,
    });
  }

  /**
   * Decides on tool calls that wait for a person; resolves with the decisions recorded (202).
   * The paused turn resumes once every waiting call of its step is decided. A call decided
   * already rejects with `ApprovalConflictError` (409) carrying the first decision; a call that
   * is not waiting, with a `conflict` ChunklogError; edited input the tool's schema refuses,
   * with `invalid_input` (400) naming `decisions[i].input`.
   */
  async decide(
    tabId: string,
    decisions: DecisionInput[],
    options: DecideOptions = {},
  ): Promise<ApprovalDecision[]> {
    const body = await this.request<{ decisions: unknown }>('POST', `${tabPath(tabId)}/approvals`, {
      body: { decisions },
      headers: idempotencyHeaders(options.idempotencyKey),
      signal: options.signal,
    });
    const recorded = decisionsOf(body.decisions);
    if (recorded === null) {
      throw new ChunklogError('invalid_response', 202, 'the answer holds no decisions');
    }
    return recorded;
  }

  /** Approves one waiting call, with edited `input` if given; resolves with its decision. */
  async approve(
    tabId: string,
    callId: string,
    options: DecideOptions & { input?: Record<string, unknown> } = {},
  ): Promise<ApprovalDecision> {
    const { input, ...rest } = options;
    const [decision] = await this.decide(
      tabId,
      [{ callId, decision: 'approve', ...(input === undefined ? {} : { input }) }],
      rest,
    );
    return decision as ApprovalDecision;
  }

  /** Denies one waiting call, with a reason the model reads; resolves with its decision. */
  async deny(
    tabId: string,
    callId: string,
    options: DecideOptions & { reason?: string } = {},
  ): Promise<ApprovalDecision> {
    const { reason, ...rest } = options;
    const [decision] = await this.decide(
      tabId,
      [{ callId, decision: 'deny', ...(reason === undefined || reason === '' ? {} : { reason }) }],
      rest,
    );
    return decision as ApprovalDecision;
  }

  /** Stops the running turn, and those of messages accepted before this and still waiting. */
  async cancel(tabId: string, signal?: AbortSignal): Promise<void> {
    await this.request('POST', `${tabPath(tabId)}/cancel`, { signal });
  }

  /** A page of the log in ascending seq: the tail, or before / after / around a seq. */
  chunks(
    tabId: string,
    query: ChunkPageQuery & { around: number },
    signal?: AbortSignal,
  ): Promise<ChunkPageAround>;
  chunks(tabId: string, query?: ChunkPageQuery, signal?: AbortSignal): Promise<ChunkPage>;
  chunks(tabId: string, query: ChunkPageQuery = {}, signal?: AbortSignal) {
    return this.request<ChunkPage>('GET', `${tabPath(tabId)}/chunks`, { query, signal });
  }

  /**
   * One page of search hits over your tabs' chunks and titles, best first. Open a hit's tab at
   * it with `chunks(hit.tabId, { around: hit.seq })`; `hit.snippet` is HTML-safe (the text
   * escaped, the matched words in <mark>).
   */
  search(query: SearchQuery, signal?: AbortSignal): Promise<SearchPage> {
    return this.request<SearchPage>('GET', '/v1/search', { query: { ...query }, signal });
  }

  /** Every hit of a search, best first, fetched a page at a time as you iterate. */
  async *searchAll(
    query: Omit<SearchQuery, 'cursor' | 'limit'> & { pageSize?: number },
    signal?: AbortSignal,
  ): AsyncGenerator<SearchHit> {
    const { pageSize, ...rest } = query;
    let cursor: string | undefined;
    do {
      const page = await this.search({ ...rest, limit: pageSize, cursor }, signal);
      yield* page.hits;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  /** The exact request the tab's next model step would send. */
  context(tabId: string, signal?: AbortSignal) {
    return this.request<TabContext>('GET', `${tabPath(tabId)}/context`, { signal });
  }

  /** A short-lived ticket that opens this tab's streams without an Authorization header. */
  streamTicket(tabId: string, signal?: AbortSignal) {
    return this.request<StreamTicket>('POST', `${tabPath(tabId)}/stream-tickets`, { signal });
  }

  /** Creates a webhook endpoint; the answer holds its secret, shown only now. */
  createWebhook(input: CreateWebhookInput, signal?: AbortSignal) {
    return this.request<WebhookWithSecret>('POST', '/v1/webhooks', { body: input, signal });
  }

  /** Your webhook endpoints, oldest first, without their secrets. */
  async listWebhooks(signal?: AbortSignal): Promise<WebhookEndpoint[]> {
    const body = await this.request<{ endpoints: WebhookEndpoint[] }>('GET', '/v1/webhooks', {
      signal,
    });
    return body.endpoints;
  }

  /** Deletes a webhook endpoint and its deliveries. */
  async deleteWebhook(endpointId: string, signal?: AbortSignal): Promise<void> {
    await this.request('DELETE', webhookPath(endpointId), { signal });
  }

  /** Replaces an endpoint's secret; the answer holds the new one, shown only now. */
  rotateWebhookSecret(endpointId: string, signal?: AbortSignal) {
    return this.request<WebhookWithSecret>('POST', `${webhookPath(endpointId)}/rotate-secret`, {
      signal,
    });
  }

  /** An endpoint's latest deliveries, newest first, with how their attempts went. */
  async webhookDeliveries(
    endpointId: string,
    query: { limit?: number } = {},
    signal?: AbortSignal,
  ): Promise<WebhookDelivery[]> {
    const body = await this.request<{ deliveries: WebhookDelivery[] }>(
      'GET',
      `${webhookPath(endpointId)}/deliveries`,
      { query, signal },
    );
    return body.deliveries;
  }

  /** The tab's live events, resumed by seq across reconnects (see TabStream). */
  stream(tabId: string, options: TabStreamOptions = {}): TabStream {
    return new TabStream(this, tabId, options);
  }

  /** A paged, evicting window over the tab, fed by pages and the stream (see TabView). */
  view(tabId: string, options: TabViewOptions = {}): TabView {
    return new TabView(this, tabId, options);
  }

  /** The absolute URL of an API path with a query. */
  url(path: string, query: RequestOptions['query'] = {}): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) search.set(name, String(value));
    }
    const text = search.toString();
    return `${this.baseUrl}${path}${text ? `?${text}` : ''}`;
  }

  /** Headers every request carries (the API key). */
  authHeaders(): Record<string, string> {
    return this.apiKey === null ? {} : { authorization: `Bearer ${this.apiKey}` };
  }

  /** A fetch with this client's fetch; failures to connect become `network` errors. */
  async fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetchImpl(url, init);
    } catch (error) {
      if (isAbort(error)) throw error;
      throw toChunklogError(error);
    }
  }

  private async request<T = void>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<T> {
    return (await this.exchange<T>(method, path, options)).body;
  }

  /** A request's parsed JSON body, with the answer's headers. */
  private async exchange<T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<{ body: T; headers: Headers }> {
    const headers: Record<string, string> = { ...this.authHeaders(), ...options.headers };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await this.fetch(this.url(path, options.query), {
      method,
      headers,
      body,
      signal: options.signal,
    });
    if (!response.ok) throw await errorFromResponse(response);
    if (response.status === 204) return { body: undefined as T, headers: response.headers };
    const text = await response.text();
    try {
      return {
        body: (text === '' ? undefined : JSON.parse(text)) as T,
        headers: response.headers,
      };
    } catch (error) {
      throw new ChunklogError('invalid_response', response.status, 'response is not JSON', {
        cause: error,
      });
    }
  }
}

/** A client of the gateway at `options.baseUrl`. */
export function createClient(options: ChunklogClientOptions): ChunklogClient {
  return new ChunklogClient(options);
}

/** The Idempotency-Key header of a create, when the caller gave a key. */
function idempotencyHeaders(key: string | undefined): Record<string, string> {
  return key === undefined ? {} : { 'idempotency-key': key };
}

function tabPath(tabId: string): string {
  return `/v1/tabs/${encodeURIComponent(tabId)}`;
}

function webhookPath(endpointId: string): string {
  return `/v1/webhooks/${encodeURIComponent(endpointId)}`;
}
