import { describe, expect, it } from 'vitest';
import { CancelWatch } from './cancel-watch';

/** Whether the watch's signal fired, and the cancel generation it names (null: none). */
function expectCancelState(watch: CancelWatch, aborted: boolean, cancelledAt: number | null) {
  expect(watch.signal.aborted).toBe(aborted);
  expect(watch.cancelledAt()).toBe(cancelledAt);
}

describe('CancelWatch', () => {
  it('keeps a cancel heard before the turn began and applies it once the turn is older', () => {
    const watch = new CancelWatch();
    watch.hear(1);
    expect(watch.signal.aborted).toBe(false);
    watch.begin(0);
    expectCancelState(watch, true, 1);
  });

  it('ignores cancels a turn was accepted after', () => {
    const watch = new CancelWatch();
    watch.begin(2);
    watch.hear(1);
    watch.hear(2);
    expectCancelState(watch, false, null);
    watch.hear(3);
    expectCancelState(watch, true, 3);
  });

  it('treats a cancel without a generation as one made after the turn began', () => {
    const watch = new CancelWatch();
    watch.hear(undefined);
    watch.begin(4);
    expectCancelState(watch, true, 5);
  });

  it('tells a message accepted after a cancel of the turn, once the turn’s stamp is known', () => {
    const watch = new CancelWatch();
    expect(watch.acceptedAfterCancel(3)).toBe(false);
    watch.begin(2);
    expect(watch.acceptedAfterCancel(2)).toBe(false);
    expect(watch.acceptedAfterCancel(3)).toBe(true);
    // Telling is not hearing: the cancel itself reaches the turn by its own paths.
    expectCancelState(watch, false, null);
  });

  it('aborts for other reasons without calling it a cancel', () => {
    const watch = new CancelWatch();
    watch.begin(0);
    watch.abort();
    expectCancelState(watch, true, null);
  });
});
