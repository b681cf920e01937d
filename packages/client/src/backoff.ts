/** Retry delays: exponential from `initialMs` up to `maxMs`, each drawn with jitter. */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** A number in [0, 1); `Math.random` by default. */
  random?: () => number;
}

/** The delay before retry number `failures` (1, 2, ...): half the step fixed, half drawn. */
export function backoffDelay(failures: number, options: BackoffOptions = {}): number {
  const initial = options.initialMs ?? 250;
  const max = options.maxMs ?? 10_000;
  const random = options.random ?? Math.random;
  const step = Math.min(max, initial * 2 ** Math.min(failures - 1, 20));
  return step / 2 + random() * (step / 2);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
