import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertNever, COMPACTION_BETA } from '@chunklog/chunk-core';
import { type Clock, systemClock } from './manual-clock';
import {
  type CacheDiagnostics,
  createCacheDiagnostics,
  fingerprintPrompt,
} from './prompt-cache/cache-diagnostics';
import { listPromptBlocks } from './prompt-cache/list-prompt-blocks';
import { createPromptCache, type PromptCache } from './prompt-cache/prompt-cache';
import type { ApiErrorType } from './reply/api-error-type';
import type { AssistantMessage, MessageUsage } from './reply/assistant-message';
import { buildStreamEvents } from './reply/build-stream-events';
import { planReply } from './reply/plan-reply';
import { findSignatureViolation } from './request/find-signature-violation';
import { formatRequestLog } from './request/format-request-log';
import { CountTokensRequestSchema, MessagesRequestSchema } from './request/messages-request';
import { type RequestViolation, validateRequest } from './request/validate-request';
import { violationFromZod } from './request/violation-from-zod';
import { type CompactionSigner, createCompactionSigner } from './signing/compaction-signer';
import { createThinkingSigner, type ThinkingSigner } from './signing/thinking-signer';

/** The context window of the Claude models the simulator serves, in tokens. */
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 200_000;

/** The `anthropic-version` values the SDK lines send: 0.x and 1.x. */
export const SUPPORTED_ANTHROPIC_VERSIONS = ['2023-06-01', '2026-10-21'] as const;

export interface SimulatorOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to bind; loopback by default. */
  host?: string;
  /** Time source for cache TTLs; inject a manual clock to test expiry. */
  clock?: Clock;
  /** Prefixes shorter than this are never cached. Default 1024 (Sonnet-class models). */
  minimumCacheableTokens?: number;
  /** How far back a missed breakpoint looks for an earlier write. Default 20 blocks. */
  lookbackBlocks?: number;
  /** Key for thinking and compaction signatures; random per simulator by default. */
  thinkingSecret?: string;
  /**
   * The model's context window in tokens: a longer prompt is refused as too long, and a reply
   * stops where the window is full. Default 200,000, as the real models; tests set a small one
   * (or use the `context-window` directive).
   */
  contextWindowTokens?: number;
  /** How many requests `requests` keeps, oldest dropped first. Default 1000. */
  requestHistoryLimit?: number;
  /**
   * How many bytes of request bodies `requests` keeps, oldest dropped first (the latest request
   * is always kept). Default 64 MiB. An agent's requests grow with its conversation, so a count
   * alone would let a long session (the all-in-one mode runs the simulator for the app's life)
   * hold a thousand ever larger bodies.
   */
  requestHistoryBytes?: number;
  /** Receives one line per request. Default `console.log`; pass `() => {}` to silence. */
  logger?: (line: string) => void;
  /** Receives a failure of the simulator itself (answered 500 `api_error`). Default `console.error`. */
  onInternalError?: (error: unknown) => void;
}

/** One request the simulator received, with what it answered. */
export interface SimulatorRequest {
  requestId: string;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (or the raw text when it did not parse). */
  body: unknown;
  status: number;
  stream: boolean;
  usage?: MessageUsage;
  /** Epoch milliseconds by the simulator's clock. */
  receivedAt: number;
}

/** A running simulator. */
export interface Simulator {
  /** Base URL to give the SDK as `baseURL`, e.g. `http://127.0.0.1:43121`. */
  url: string;
  port: number;
  /** The latest requests received (within `requestHistoryLimit` and `requestHistoryBytes`), oldest first. */
  requests: SimulatorRequest[];
  clock: Clock;
  cache: PromptCache;
  signer: ThinkingSigner;
  compactionSigner: CompactionSigner;
  /** The fingerprints of earlier responses that cache diagnostics compare against. */
  diagnostics: CacheDiagnostics;
  /** Stops listening and cuts open streams. */
  close(): Promise<void>;
}

const maximumBodyBytes = 32 * 1024 * 1024;

/** Thrown inside a handler to answer with the API's error JSON. */
class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly errorType: ApiErrorType,
    message: string,
    readonly headers: Record<string, string> = {},
    /** `error.details.error_code`, for the errors the API names by a code. */
    readonly errorCode?: string,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

/**
 * Starts an Anthropic Messages API simulator on node:http: `POST /v1/messages` (streaming and
 * not) and `POST /v1/messages/count_tokens`, strict request validation, signed thinking,
 * prompt-cache accounting and `[[sim: ...]]` directives (see the package README).
 */
export async function createSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? ((line: string) => console.log(line));
  const onInternalError = options.onInternalError ?? ((error: unknown) => console.error(error));
  const secret = options.thinkingSecret ?? randomBytes(32);
  const signer = createThinkingSigner(secret);
  const compactionSigner = createCompactionSigner(secret);
  const diagnostics = createCacheDiagnostics();
  const contextWindowTokens = options.contextWindowTokens ?? DEFAULT_CONTEXT_WINDOW_TOKENS;
  const cache = createPromptCache({
    clock,
    minimumCacheableTokens: options.minimumCacheableTokens ?? 1024,
    lookbackBlocks: options.lookbackBlocks ?? 20,
  });
  const failureCounts = new Map<string, number>();
  const requests: SimulatorRequest[] = [];
  const historyLimit = options.requestHistoryLimit ?? 1000;
  const historyBytesLimit = options.requestHistoryBytes ?? 64 * 1024 * 1024;
  /** Body sizes of the records `requests` holds, in the same order. */
  const heldBodyBytes = new Map<SimulatorRequest, number>();
  let retainedBodyBytes = 0;

  function trimHistory(): void {
    while (
      requests.length > historyLimit ||
      (retainedBodyBytes > historyBytesLimit && requests.length > 1)
    ) {
      const dropped = requests.shift();
      if (dropped === undefined) return;
      retainedBodyBytes -= heldBodyBytes.get(dropped) ?? 0;
      heldBodyBytes.delete(dropped);
    }
  }

  /** Counts a record's body against the byte budget, unless the record was already dropped. */
  function holdBody(record: SimulatorRequest, bytes: number): void {
    const previous = heldBodyBytes.get(record);
    if (previous === undefined) return;
    heldBodyBytes.set(record, bytes);
    retainedBodyBytes += bytes - previous;
    trimHistory();
  }

  const server = createServer((request, response) => {
    // A container health check, answered before recording: probes are not model traffic.
    if (request.method === 'GET' && request.url === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    const started = performance.now();
    const record: SimulatorRequest = {
      requestId: `req_${randomBytes(12).toString('hex')}`,
      method: request.method ?? 'GET',
      path: (request.url ?? '/').split('?')[0] ?? '/',
      headers: request.headers,
      body: undefined,
      status: 0,
      stream: false,
      receivedAt: clock.now(),
    };
    requests.push(record);
    heldBodyBytes.set(record, 0);
    trimHistory();
    const aborted = new AbortController();
    response.on('close', () => aborted.abort());
    handle(request, response, record, aborted.signal)
      .catch((error: unknown) => {
        const failure =
          error instanceof ApiFailure
            ? error
            : new ApiFailure(500, 'api_error', 'Internal server error');
        if (!(error instanceof ApiFailure) && !aborted.signal.aborted) onInternalError(error);
        if (!response.headersSent) sendError(response, record, failure);
        else response.end();
      })
      .finally(() => {
        const body = record.body as { model?: unknown } | undefined;
        logger(
          formatRequestLog({
            method: record.method,
            path: record.path,
            status: record.status,
            ...(typeof body?.model === 'string' ? { model: body.model } : {}),
            stream: record.stream,
            ...(record.usage ? { usage: record.usage } : {}),
            durationMilliseconds: performance.now() - started,
          }),
        );
      });
  });

  async function handle(
    request: IncomingMessage,
    response: ServerResponse,
    record: SimulatorRequest,
    signal: AbortSignal,
  ): Promise<void> {
    const route = `${record.method} ${record.path}`;
    if (route !== 'POST /v1/messages' && route !== 'POST /v1/messages/count_tokens') {
      throw new ApiFailure(404, 'not_found_error', 'Not Found');
    }
    const text = await readBody(request);
    record.body = text;
    holdBody(record, Buffer.byteLength(text));
    const version = request.headers['anthropic-version'];
    if (version === undefined) {
      throw new ApiFailure(400, 'invalid_request_error', 'anthropic-version: header is required');
    }
    if (!(SUPPORTED_ANTHROPIC_VERSIONS as readonly string[]).includes(String(version))) {
      throw new ApiFailure(
        400,
        'invalid_request_error',
        `anthropic-version: invalid version ${String(version)}`,
      );
    }
    if (!request.headers['x-api-key'] && !request.headers.authorization) {
      throw new ApiFailure(401, 'authentication_error', 'x-api-key header is required');
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiFailure(
        400,
        'invalid_request_error',
        'There was an error parsing the body of your request',
      );
    }
    record.body = body;
    record.stream = (body as { stream?: unknown } | null)?.stream === true;
    const compactionBeta = String(request.headers['anthropic-beta'] ?? '')
      .split(',')
      .some((beta) => beta.trim() === COMPACTION_BETA);

    if (record.path === '/v1/messages/count_tokens') {
      // Counting takes the same body without the generation settings, and accepts the
      // `compaction` parameter but ignores it: the count is of the conversation as sent.
      const { compaction, ...counted } = (body ?? {}) as Record<string, unknown>;
      if (compaction !== undefined && compaction !== null && !compactionBeta) {
        throw invalid({ path: 'compaction', message: 'Extra inputs are not permitted' });
      }
      const violation = validateRequest({ max_tokens: 1, ...counted }, { compactionBeta }).find(
        (found) => found.path !== 'max_tokens',
      );
      if (violation) throw invalid(violation);
      const parsed = CountTokensRequestSchema.safeParse(counted);
      if (!parsed.success) throw invalid(violationFromZod(parsed.error));
      checkModel(parsed.data.model);
      const countViolation = findSignatureViolation(parsed.data, signer, compactionSigner);
      if (countViolation) throw invalid(countViolation);
      const inputTokens = listPromptBlocks(parsed.data).reduce(
        (total, block) => total + block.tokens,
        0,
      );
      sendJson(response, record, 200, { input_tokens: inputTokens });
      return;
    }

    // The shared validator words violations as the real API does; zod then only guards the
    // shapes the simulator relies on, and signatures need this simulator's key.
    const violation = validateRequest(body, { compactionBeta })[0];
    if (violation) throw invalid(violation);
    const parsed = MessagesRequestSchema.safeParse(body);
    if (!parsed.success) throw invalid(violationFromZod(parsed.error));
    const messagesRequest = parsed.data;
    checkModel(messagesRequest.model);
    const signatureViolation = findSignatureViolation(messagesRequest, signer, compactionSigner);
    if (signatureViolation) throw invalid(signatureViolation);

    const promptBlocks = listPromptBlocks(messagesRequest);
    const plan = planReply(messagesRequest, {
      signer,
      compactionSigner,
      failureCounts,
      inputTokens: promptBlocks.reduce((total, block) => total + block.tokens, 0),
      contextWindowTokens,
    });
    switch (plan.kind) {
      case 'invalid':
        throw new ApiFailure(400, 'invalid_request_error', plan.message);
      case 'error':
        await sleep(plan.delayMilliseconds, undefined, { signal });
        throw new ApiFailure(
          plan.status,
          plan.errorType,
          plan.message,
          plan.retryAfterSeconds === undefined
            ? {}
            : { 'retry-after': String(plan.retryAfterSeconds) },
          plan.errorCode,
        );
      case 'message':
        break;
      default:
        assertNever(plan);
    }

    const cacheUsage = cache.account(promptBlocks);
    const fingerprint = fingerprintPrompt(messagesRequest, promptBlocks);
    const previousMessageId = messagesRequest.diagnostics?.previous_message_id;
    const diagnosis =
      messagesRequest.diagnostics === undefined || messagesRequest.diagnostics === null
        ? null
        : {
            cache_miss_reason:
              typeof previousMessageId === 'string'
                ? diagnostics.diagnose(previousMessageId, fingerprint)
                : null,
          };
    diagnostics.record(plan.id, fingerprint);
    const message: AssistantMessage = {
      id: plan.id,
      type: 'message',
      role: 'assistant',
      model: messagesRequest.model,
      content: plan.content,
      stop_reason: plan.stopReason,
      stop_sequence: plan.stopSequence,
      stop_details: null,
      usage: {
        ...cacheUsage,
        output_tokens: plan.outputTokens,
        service_tier: 'standard',
        inference_geo: 'not_available',
      },
      diagnostics: diagnosis,
    };
    record.usage = message.usage;
    await sleep(plan.delayMilliseconds, undefined, { signal });

    if (!messagesRequest.stream) {
      if (plan.tokensPerSecond) {
        await sleep((plan.outputTokens / plan.tokensPerSecond) * 1000, undefined, { signal });
      }
      sendJson(response, record, 200, message);
      return;
    }

    record.status = 200;
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'request-id': record.requestId,
    });
    const events = buildStreamEvents(message, {
      requestId: record.requestId,
      ...(plan.streamError ? { streamError: plan.streamError } : {}),
    });
    for (const event of events) {
      if (signal.aborted) return;
      if (plan.tokensPerSecond && event.tokens > 0) {
        await sleep((event.tokens / plan.tokensPerSecond) * 1000, undefined, { signal });
      }
      response.write(`event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`);
    }
    response.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    requests,
    clock,
    cache,
    signer,
    compactionSigner,
    diagnostics,
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function invalid(violation: RequestViolation): ApiFailure {
  const message = violation.path ? `${violation.path}: ${violation.message}` : violation.message;
  return new ApiFailure(400, 'invalid_request_error', message, {}, violation.code);
}

function checkModel(model: string): void {
  // The real API answers 404 for a model it does not serve; every Claude name is served here.
  if (!model.startsWith('claude-')) {
    throw new ApiFailure(404, 'not_found_error', `model: ${model}`);
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maximumBodyBytes) {
      throw new ApiFailure(413, 'request_too_large', 'Request exceeds the maximum allowed size');
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(
  response: ServerResponse,
  record: SimulatorRequest,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  record.status = status;
  response.writeHead(status, {
    'content-type': 'application/json',
    'request-id': record.requestId,
    ...headers,
  });
  response.end(JSON.stringify(body));
}

function sendError(response: ServerResponse, record: SimulatorRequest, failure: ApiFailure): void {
  sendJson(
    response,
    record,
    failure.status,
    {
      type: 'error',
      error: {
        type: failure.errorType,
        message: failure.message,
        ...(failure.errorCode === undefined ? {} : { details: { error_code: failure.errorCode } }),
      },
      request_id: record.requestId,
    },
    failure.headers,
  );
}
