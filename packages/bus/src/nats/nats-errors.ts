import { DomainError } from '@chunklog/chunk-core';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import {
  ClosedConnectionError,
  DrainingConnectionError,
  NoRespondersError as NatsNoRespondersError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { BusUnavailableError, NoRespondersError, RequestTimeoutError } from '../bus-errors';

/**
 * The bus's error for a NATS client failure: a closed, draining or unreachable connection
 * becomes BusUnavailableError (the gateway answers 503); chunklog's own errors and anything
 * else pass through.
 */
export function toBusError(error: unknown, doing: string): unknown {
  if (error instanceof DomainError) return error;
  if (
    error instanceof ClosedConnectionError ||
    error instanceof DrainingConnectionError ||
    error instanceof RequestError ||
    error instanceof TimeoutError
  ) {
    return new BusUnavailableError(`NATS unavailable while ${doing}: ${error.message}`, {
      cause: error,
    });
  }
  return error;
}

/** The bus's error for a failed request(): nobody serves it, nobody answered in time, or NATS. */
export function toRequestError(error: unknown, subject: string, timeoutMs: number): unknown {
  const cause = error instanceof RequestError ? (error.cause ?? error) : error;
  if (
    cause instanceof NatsNoRespondersError ||
    (error instanceof RequestError && error.isNoResponders())
  ) {
    return new NoRespondersError(subject, { cause: error });
  }
  if (cause instanceof TimeoutError)
    return new RequestTimeoutError(subject, timeoutMs, { cause: error });
  return toBusError(error, `requesting ${subject}`);
}

/** Whether a failure (or one of its causes) is NATS saying nobody listens on the subject. */
export function hasNoResponders(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    if (cause instanceof NatsNoRespondersError) return true;
    if (cause instanceof RequestError && cause.isNoResponders()) return true;
    cause = cause.cause;
  }
  return false;
}

/** Whether JetStream answered that the stream or consumer does not exist (a server that lost them). */
export function isMissingStreamOrConsumer(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamNotFound ||
      error.code === JetStreamApiCodes.ConsumerNotFound)
  );
}

/** Whether JetStream answered with this error code. */
export function isJetStreamError(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
}
