import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { placeDelta, placeSeal } from './exactly-once';

describe('placeSeal', () => {
  it('drops seqs delivered, takes the next, and sees a gap beyond it', () => {
    expect(placeSeal(4, 3)).toBe('duplicate');
    expect(placeSeal(4, 4)).toBe('duplicate');
    expect(placeSeal(4, 5)).toBe('next');
    expect(placeSeal(4, 7)).toBe('gap');
    expect(placeSeal(0, 1)).toBe('next');
  });

  it('delivers any resent, reordered stream of seals exactly once, in order, when gaps are filled', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.integer({ min: 1, max: 30 }), { maxLength: 80 }),
        (total, arrivals) => {
          // Each arrival is a seal the stream resends or sends early; a gap is filled from the
          // store (every seq up to the one before), as the relay does.
          const delivered: number[] = [];
          let lastSeq = 0;
          const deliver = (seq: number) => {
            const placement = placeSeal(lastSeq, seq);
            if (placement === 'duplicate') return;
            if (placement === 'gap') for (let fill = lastSeq + 1; fill < seq; fill++) deliver(fill);
            delivered.push(seq);
            lastSeq = seq;
          };
          for (const seq of arrivals.filter((seq) => seq <= total)) deliver(seq);
          deliver(total);
          expect(delivered).toEqual(Array.from({ length: total }, (_, index) => index + 1));
        },
      ),
    );
  });
});

describe('placeDelta', () => {
  it('drops text delivered, trims an overlap, and sees a gap past what was delivered', () => {
    expect(placeDelta(5, 0, 'hello')).toEqual({ kind: 'duplicate' });
    expect(placeDelta(5, 2, 'llo')).toEqual({ kind: 'duplicate' });
    expect(placeDelta(5, 0, 'hello world')).toEqual({
      kind: 'fresh',
      offset: 5,
      text: ' world',
      whole: false,
    });
    expect(placeDelta(5, 5, '!')).toEqual({ kind: 'fresh', offset: 5, text: '!', whole: true });
    expect(placeDelta(5, 6, '!')).toEqual({ kind: 'gap' });
  });

  it('rebuilds the block exactly from any resent, overlapping deltas that leave no gap', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 60 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 40 }),
        (full, cuts) => {
          // Deltas cut anywhere from the full text, arriving in any order and resent; after
          // each, what was delivered is always a prefix of the full text.
          let held = '';
          for (const [a, b] of cuts) {
            const start = a % (full.length + 1);
            const end = start + (b % (full.length - start + 1));
            const placement = placeDelta(held.length, start, full.slice(start, end));
            if (placement.kind === 'fresh') {
              expect(placement.offset).toBe(held.length);
              held += placement.text;
            }
            expect(full.startsWith(held)).toBe(true);
          }
          // A resume resends the whole text at offset 0: the block ends complete.
          const resume = placeDelta(held.length, 0, full);
          if (resume.kind === 'fresh') held += resume.text;
          expect(held).toBe(full);
        },
      ),
    );
  });
});
