let active = false;

/**
 * True while `startTracing` has an SDK registered in this process (spans are recorded);
 * false with the API's no-op tracer. Lets a hot path skip span bookkeeping entirely when off.
 */
export function tracingActive(): boolean {
  return active;
}

/** Set by `startTracing` and its shutdown. */
export function setTracingActive(on: boolean): void {
  active = on;
}
