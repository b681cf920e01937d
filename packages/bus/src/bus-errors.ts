import { DomainError, type DomainErrorCode } from '@chunklog/chunk-core';

/** A request got no reply within its timeout (someone listens, but did not answer in time). */
export class RequestTimeoutError extends DomainError {
  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    super('unavailable', `no reply on ${subject} within ${timeoutMs} ms`, options);
    this.name = 'RequestTimeoutError';
  }
}

/** A request found nobody serving its subject, so it failed at once instead of timing out. */
export class NoRespondersError extends DomainError {
  constructor(
    readonly subject: string,
    options?: { cause?: unknown },
  ) {
    super('unavailable', `nobody serves ${subject}`, options);
    this.name = 'NoRespondersError';
  }
}

/** The serving handler threw an error that is not one of chunklog's named errors. */
export class RemoteHandlerError extends DomainError {
  constructor(code: DomainErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'RemoteHandlerError';
  }
}

/** The broker (or the in-process bus) is closed or cannot take the operation right now. */
export class BusUnavailableError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('unavailable', message, options);
    this.name = 'BusUnavailableError';
  }
}
