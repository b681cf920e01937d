import { describe, expect, it } from 'vitest';
import { memoryStorage, ResumePoints } from './resume-points';

const tabId = '00000000-0000-4000-8000-00000000000a';

describe('ResumePoints', () => {
  it("keeps an answer's start where another transport on the same storage finds it", () => {
    const storage = memoryStorage();
    new ResumePoints(storage).set(tabId, { after: 7, userChunkId: 'u1' });
    expect(new ResumePoints(storage).get(tabId)).toEqual({
      after: 7,
      userChunkId: 'u1',
      turnId: null,
    });
  });

  it('forgets the answer to its own message, not one stored since', () => {
    const points = new ResumePoints(memoryStorage());
    points.set(tabId, { after: 7, userChunkId: 'u2' });
    points.forget(tabId, 'u1');
    expect(points.get(tabId)?.userChunkId).toBe('u2');
    points.forget(tabId, 'u2');
    expect(points.get(tabId)).toBeNull();
  });

  it.each([
    ['not JSON', '{'],
    ['another shape', '{"after":"7","userChunkId":"u1"}'],
    ['null', 'null'],
  ])('reads %s as no resume point', (_what, stored) => {
    const storage = memoryStorage();
    storage.setItem(`chunklog:ai-sdk:${tabId}`, stored);
    expect(new ResumePoints(storage).get(tabId)).toBeNull();
  });
});
