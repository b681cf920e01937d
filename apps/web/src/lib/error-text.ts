import type { Chunk } from '@chunklog/chunk-core';

type ErrorData = Extract<Chunk, { type: 'error' }>['data'];

/** An error chunk as a person reads it: one plain sentence, and the raw text for whoever asks. */
export type ErrorText = { summary: string; details: string };

/**
 * The sentence for an error chunk. `assistant` errors are model calls that failed for good (the
 * worker retried those worth retrying first); `system` errors are turns that failed otherwise.
 */
export function describeError(role: string, data: ErrorData): ErrorText {
  const details =
    data.statusCode === undefined ? data.message : `Error ${data.statusCode}: ${data.message}`;
  return { summary: summaryOf(role, data), details };
}

function summaryOf(role: string, { message, statusCode }: ErrorData): string {
  if (role !== 'assistant') return 'The turn failed before the model could answer.';
  if (statusCode === 529 || (statusCode === undefined && /overloaded/i.test(message))) {
    return 'The model is overloaded and did not answer. Try again in a moment.';
  }
  if (statusCode === 429) return 'The model is getting too many requests. Try again in a moment.';
  if (statusCode === 401 || statusCode === 403) {
    return 'The model service refused this deployment’s credentials.';
  }
  if (statusCode === 413 || /prompt is too long/i.test(message)) {
    return 'The conversation is too long for the model.';
  }
  if (statusCode === 400) return 'The model refused the request.';
  return 'The model failed to answer.';
}
