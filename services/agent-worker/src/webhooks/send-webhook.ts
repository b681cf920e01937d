import type { ClaimedWebhookDelivery } from '@chunklog/store';
import { signWebhook } from './sign-webhook';

/** How one attempt went, before the dispatcher decides when to retry. */
export type SendResult =
  | { delivered: true; statusCode: number }
  | { delivered: false; statusCode: number | null; error: string };

/**
 * Posts one delivery, signed for this attempt's timestamp. Any 2xx delivers; anything else
 * (another status, a redirect, which is not followed, a network error, no answer within
 * `timeoutMs`, `signal` aborting it) is a failure to retry.
 */
export async function sendWebhook(
  delivery: ClaimedWebhookDelivery,
  options: { timeoutMs: number; now: () => number; signal: AbortSignal },
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
    });
    // The answer's body is not read: only the status counts, and the connection is let go.
    await response.body?.cancel().catch(() => {});
    if (response.status >= 200 && response.status < 300) {
      return { delivered: true, statusCode: response.status };
    }
    return { delivered: false, statusCode: response.status, error: `HTTP ${response.status}` };
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    return {
      delivered: false,
      statusCode: null,
      error: timedOut
        ? `no answer within ${options.timeoutMs} ms`
        : options.signal.aborted
          ? 'abandoned: the dispatcher stopped'
          : describeFetchError(error),
    };
  }
}

/** fetch reports network failures as "fetch failed" with the reason in `cause`. */
function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
