import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResumeFilter, type StreamEvent } from './resume-filter';
import { sealedText, testTabId, testTurnId } from './testing/sealed-text';

const tabId = testTabId;
const turnId = testTurnId;

function seal(seq: number): StreamEvent {
  return {
    event: 'chunk-seal',
    data: { tabId, chunk: sealedText(seq, 'assistant', `chunk ${seq}`) },
  };
}

const blockId = '00000000-0000-4000-8000-00000000b10c';
const open: StreamEvent = {
  event: 'chunk-open',
  data: { tabId, id: blockId, turnId, step: 0, role: 'assistant', type: 'text' },
};
const delta = (offset: number, text: string): StreamEvent => ({
  event: 'chunk-delta',
  data: { tabId, id: blockId, offset, text },
});
const live = (activeTurnId: string | null): StreamEvent => ({
  event: 'stream-live',
  data: { tabId, after: 0, status: activeTurnId ? 'running' : 'idle', activeTurnId },
});

describe('ResumeFilter', () => {
  it('passes each seal once, in order, whatever a resume resends', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 30 }), { maxLength: 60 }), (resumes) => {
        const filter = new ResumeFilter(0);
        const delivered: number[] = [];
        // Each resume replays from some earlier point (at most the last delivered + 1) to 30.
        for (const from of [1, ...resumes]) {
          filter.connected();
          for (let seq = Math.min(from, filter.lastSeq + 1); seq <= 30; seq += 1) {
            const verdict = filter.filter(seal(seq));
            if (verdict !== null && verdict !== 'gap' && verdict.event === 'chunk-seal') {
              delivered.push(verdict.data.chunk.seq);
            }
          }
        }
        expect(delivered).toEqual(Array.from({ length: 30 }, (_, index) => index + 1));
      }),
    );
  });

  it('asks to resume when a live seal skips a seq, but takes the catch-up as the store has it', () => {
    const filter = new ResumeFilter(0);
    filter.connected();
    // A cleared tab's log starts above 1: the catch-up is the store's, nothing was skipped.
    expect(filter.filter(seal(5))).not.toBeNull();
    expect(filter.filter(live(null))).not.toBeNull();
    expect(filter.filter(seal(7))).toBe('gap');
    expect(filter.lastSeq).toBe(5);
    expect(filter.filter(seal(6))).not.toBeNull();
  });

  it('delivers each character of an open block once across resumes that resend its text', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (text, cuts) => {
          const filter = new ResumeFilter(0);
          let streamed = '';
          const take = (event: StreamEvent) => {
            const verdict = filter.filter(event);
            if (verdict === 'gap') throw new Error('gap');
            if (verdict?.event === 'chunk-delta') {
              expect(verdict.data.offset).toBe(streamed.length);
              streamed += verdict.data.text;
            }
          };
          take(open);
          let sent = 0;
          for (const cut of cuts) {
            const until = Math.min(text.length, sent + (cut % 7));
            take(delta(sent, text.slice(sent, until)));
            sent = until;
            // A resume: the block announced again, then its whole text so far at offset 0.
            filter.connected();
            take(open);
            take(delta(0, text.slice(0, sent)));
          }
          take(delta(sent, text.slice(sent)));
          expect(streamed).toBe(text);
        },
      ),
    );
  });

  it('asks to resume when a delta would skip characters, and forgets blocks of ended turns', () => {
    const filter = new ResumeFilter(0);
    filter.filter(open);
    expect(filter.filter(delta(3, 'abc'))).toBe('gap');
    expect(filter.filter(live(null))).not.toBeNull();
    expect(filter.openBlockIds()).toEqual([]);
    expect(filter.filter(delta(0, 'late'))).toBeNull();
  });
});
