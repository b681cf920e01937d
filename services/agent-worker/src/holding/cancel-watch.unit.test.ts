import { describe, expect, it } from 'vitest';
import { CancelWatch } from './cancel-watch';

describe('CancelWatch', () => {
  it('keeps a cancel heard before the turn began and applies it once the turn is older', () => {
    const watch = new CancelWatch();
    watch.hear(1);
    expect(watch.signal.aborted).toBe(false);
    watch.begin(0);
    expect(watch.signal.aborted).toBe(true);
    expect(watch.cancelledAt()).toBe(1);
  });

  it('ignores cancels a turn was accepted after', () => {
    const watch = new CancelWatch();
    watch.begin(2);
    watch.hear(1);
    watch.hear(2);
    expect(watch.signal.aborted).toBe(false);
    expect(watch.cancelledAt()).toBeNull();
    watch.hear(3);
    expect(watch.signal.aborted).toBe(true);
    expect(watch.cancelledAt()).toBe(3);
  });

  it('treats a cancel without a generation as one made after the turn began', () => {
    const watch = new CancelWatch();
    watch.hear(undefined);
    watch.begin(4);
    expect(watch.signal.aborted).toBe(true);
    expect(watch.cancelledAt()).toBe(5);
  });

  it('aborts for other reasons without calling it a cancel', () => {
    const watch = new CancelWatch();
    watch.begin(0);
    watch.abort();
    expect(watch.signal.aborted).toBe(true);
    expect(watch.cancelledAt()).toBeNull();
  });
});
