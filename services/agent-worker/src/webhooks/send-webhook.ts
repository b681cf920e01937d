import type { ClaimedWebhookDelivery } from '@chunklog/store';
import type { Dispatcher } from 'undici';
import { signWebhook } from './sign-webhook';

/** How one attempt went, before the dispatcher decides when to retry. */
export type SendResult =
  | { delivered: true; statusCode: number }
  | {
      delivered: false;
      statusCode: number | null;
      /** What the tenant is shown: no address or port of the worker's network. */
      error: string;
      /** The failure in full (addresses included), for the worker's log only. */
      detail?: string;
    };

/**
 * Posts one delivery, signed for this attempt's timestamp, through `dispatcher` (the worker's
 * guarded agent: only allowed addresses are connected to). Any 2xx delivers; anything else
 * (another status, a redirect, which is not followed, a refused address, a network error, no
 * answer within `timeoutMs`, `signal` aborting it) is a failure to retry.
 */
export async function sendWebhook(
  delivery: ClaimedWebhookDelivery,
  options: {
    timeoutMs: number;
    now: () => number;
    signal: AbortSignal;
    dispatcher: Dispatcher;
  },
): Promise<SendResult> {
  const body = JSON.stringify(delivery.event);
  const timestamp = Math.floor(options.now() / 1000);
  const signature = signWebhook(delivery.secret, {
    messageId: delivery.messageId,
    timestamp,
    body,
  });
  try {
    const response = await fetch(delivery.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'chunklog-webhooks',
        'webhook-id': delivery.messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.signal]),
      dispatcher: options.dispatcher,
    } as RequestInit);
    // The answer's body is not read: only the status counts, and the connection is let go.
    await response.body?.cancel().catch(() => {});
    if (response.status >= 200 && response.status < 300) {
      return { delivered: true, statusCode: response.status };
    }
    return { delivered: false, statusCode: response.status, error: `HTTP ${response.status}` };
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    if (timedOut) {
      return {
        delivered: false,
        statusCode: null,
        error: `no answer within ${options.timeoutMs} ms`,
      };
    }
    if (options.signal.aborted) {
      return { delivered: false, statusCode: null, error: 'abandoned: the dispatcher stopped' };
    }
    return {
      delivered: false,
      statusCode: null,
      error: connectionFailure(error),
      detail: describeFetchError(error),
    };
  }
}

/** What a tenant is told of a failed connection, by its code: never the address or port. */
const failureByCode: Record<string, string> = {
  ERR_ADDRESS_NOT_ALLOWED: "the endpoint's address is not allowed",
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection closed before the answer',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** fetch reports network failures as "fetch failed" with the reason in `cause`. */
function connectionFailure(error: unknown): string {
  const code = causeCode(error);
  if (code === undefined) return 'connection failed';
  // TLS failures are named by their code alone (CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID).
  return (
    failureByCode[code] ?? (/CERT|TLS|SSL/.test(code) ? `TLS failed: ${code}` : 'connection failed')
  );
}

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause as
    | { code?: unknown; errors?: { code?: unknown }[] }
    | undefined;
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  return typeof code === 'string' ? code : undefined;
}

function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
