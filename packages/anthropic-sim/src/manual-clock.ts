/** A source of the current time in epoch milliseconds; injectable so tests control TTLs. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to. */
export interface ManualClock extends Clock {
  advance(milliseconds: number): void;
  set(epochMilliseconds: number): void;
}

/** Creates a clock that starts at `start` and moves only through `advance` and `set`. */
export function createManualClock(start = Date.UTC(2026, 0, 1)): ManualClock {
  let current = start;
  return {
    now: () => current,
    advance: (milliseconds) => {
      current += milliseconds;
    },
    set: (epochMilliseconds) => {
      current = epochMilliseconds;
    },
  };
}
