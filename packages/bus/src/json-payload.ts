import { InvalidInputError } from '@chunklog/chunk-core';

/**
 * Serializes a payload the way it travels on NATS. The in-process bus serializes too, so a
 * receiver never shares (or mutates) the sender's object and a Date arrives as a string on
 * both adapters. `undefined` travels as null, as JSON has no undefined.
 */
export function encodePayload(payload: unknown): string {
  try {
    return JSON.stringify(payload === undefined ? null : payload);
  } catch (error) {
    throw new InvalidInputError('bus payloads must be JSON-serializable', { cause: error });
  }
}

/**
 * Serializes a serving handler's return value. A value that is not JSON is the handler's bug,
 * not the requester's input, so it fails as a plain error, which reaches the requester as
 * `unavailable` instead of `invalid_input`.
 */
export function encodeReply(value: unknown): string {
  try {
    return encodePayload(value);
  } catch (error) {
    throw new Error('the handler returned a value that is not JSON-serializable', { cause: error });
  }
}

/** Parses a received payload; an empty body (a bare NATS message) reads as null. */
export function decodePayload(text: string): unknown {
  return text.length === 0 ? null : JSON.parse(text);
}
