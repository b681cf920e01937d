import { describe, expect, it } from 'vitest';
import { takeBatch } from './take-batch';

const limits = { maxItems: 3, maxChunks: 10, maxBytes: 1000 };

function item(name: string, tabId: string, chunkCount = 1, bytes = 10, ids?: string[]) {
  const chunkIds = ids ?? Array.from({ length: chunkCount }, (_, index) => `${name}-${index}`);
  return { name, tabId, chunkIds, bytes };
}

const names = (items: Array<{ name: string }>) => items.map((entry) => entry.name);

describe('takeBatch', () => {
  it('takes waiting appends in call order up to the item limit', () => {
    const waiting = ['a', 'b', 'c', 'd'].map((name) => item(name, `tab-${name}`));
    const { batch, rest } = takeBatch(waiting, new Set(), limits);
    expect(names(batch)).toEqual(['a', 'b', 'c']);
    expect(names(rest)).toEqual(['d']);
  });

  it('takes several appends of one tab together, in order', () => {
    const waiting = [item('a1', 'a'), item('b1', 'b'), item('a2', 'a')];
    expect(names(takeBatch(waiting, new Set(), limits).batch)).toEqual(['a1', 'b1', 'a2']);
  });

  it('leaves a busy tab’s appends waiting, and every later one of that tab', () => {
    const waiting = [item('a1', 'a'), item('b1', 'b'), item('a2', 'a')];
    const { batch, rest } = takeBatch(waiting, new Set(['a']), limits);
    expect(names(batch)).toEqual(['b1']);
    expect(names(rest)).toEqual(['a1', 'a2']);
  });

  it('keeps a tab’s order when an append of it does not fit', () => {
    const waiting = [item('a1', 'a', 6), item('b1', 'b', 6), item('c1', 'c', 2), item('b2', 'b')];
    const { batch, rest } = takeBatch(waiting, new Set(), limits);
    // b1 would pass the chunk limit; b2 must not overtake it, c1 may go.
    expect(names(batch)).toEqual(['a1', 'c1']);
    expect(names(rest)).toEqual(['b1', 'b2']);
  });

  it('bounds a batch by bytes, but always takes the first append whatever its size', () => {
    const waiting = [item('big', 'a', 1, 5000), item('small', 'b', 1, 10)];
    expect(names(takeBatch(waiting, new Set(), limits).batch)).toEqual(['big']);
    const second = [item('small', 'b', 1, 600), item('medium', 'c', 1, 600)];
    expect(names(takeBatch(second, new Set(), limits).batch)).toEqual(['small']);
  });

  it('leaves an append of a chunk id already in the batch, and its tab’s later ones, waiting', () => {
    const waiting = [
      item('a1', 'a', 1, 10, ['x']),
      item('b1', 'b', 1, 10, ['x']),
      item('c1', 'c'),
      item('b2', 'b'),
    ];
    const { batch, rest } = takeBatch(waiting, new Set(), { ...limits, maxItems: 10 });
    expect(names(batch)).toEqual(['a1', 'c1']);
    expect(names(rest)).toEqual(['b1', 'b2']);
  });

  it('takes nothing when every waiting append’s tab is busy', () => {
    const waiting = [item('a1', 'a'), item('a2', 'a')];
    const { batch, rest } = takeBatch(waiting, new Set(['a']), limits);
    expect(batch).toEqual([]);
    expect(names(rest)).toEqual(['a1', 'a2']);
  });
});
