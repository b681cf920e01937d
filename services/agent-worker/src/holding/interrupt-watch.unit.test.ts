import { describe, expect, it } from 'vitest';
import { InterruptWatch, StepInterruptedError, wasInterrupted } from './interrupt-watch';

describe('InterruptWatch', () => {
  it('cuts the running step with an interrupt as its reason', () => {
    const watch = new InterruptWatch();
    const turn = new AbortController();
    const step = watch.beginStep(turn.signal);
    expect(step.aborted).toBe(false);
    watch.hear();
    expect(step.aborted).toBe(true);
    expect(step.reason).toBeInstanceOf(StepInterruptedError);
    expect(wasInterrupted(step)).toBe(true);
    expect(turn.signal.aborted).toBe(false);
  });

  it('tells a cancel of the turn from an interrupt', () => {
    const watch = new InterruptWatch();
    const turn = new AbortController();
    const step = watch.beginStep(turn.signal);
    turn.abort();
    expect(step.aborted).toBe(true);
    expect(wasInterrupted(step)).toBe(false);
    // A later interrupt does not change how the step ended.
    watch.hear();
    expect(wasInterrupted(step)).toBe(false);
  });

  it('keeps a notice heard between steps pending until an inbox read begun after it is done', () => {
    const watch = new InterruptWatch();
    const turn = new AbortController();
    const done = watch.beginStep(turn.signal);
    watch.endStep();
    const before = watch.mark();
    watch.hear();
    expect(done.aborted).toBe(false);
    expect(watch.pending).toBe(true);
    // A read that began before the notice may have missed its message.
    watch.handledThrough(before);
    expect(watch.pending).toBe(true);
    const after = watch.mark();
    watch.handledThrough(after);
    expect(watch.pending).toBe(false);
    // The next step starts clean.
    expect(watch.beginStep(turn.signal).aborted).toBe(false);
  });
});
