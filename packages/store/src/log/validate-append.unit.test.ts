import { randomUUID } from 'node:crypto';
import { InvalidInputError, type NewChunk } from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { validateAppend } from './validate-append';

const tabId = randomUUID();
const chunk = (fields: Partial<NewChunk> & Pick<NewChunk, 'role' | 'type' | 'data'>): NewChunk =>
  ({ id: randomUUID(), tabId, turnId: randomUUID(), step: 3, ...fields }) as NewChunk;

describe('validateAppend', () => {
  it('builds the JSON chunklog_append reads, data escaped, for several chunks', () => {
    const chunks = [
      chunk({ role: 'user', type: 'text', data: { text: 'say "hi"\\n\n ünï 🙂' } }),
      chunk({
        role: 'assistant',
        type: 'tool_call',
        data: { callId: 'c1', name: 'run', arguments: { 'k"ey': ['\\u0000', 1, null] } },
      }),
    ];
    const request = validateAppend(tabId, chunks, { expectedSeq: 7 });
    expect(JSON.parse(request.chunksJson)).toEqual(
      chunks.map(({ id, turnId, step, role, type, data }) => ({
        id,
        turnId,
        step,
        role,
        type,
        data,
      })),
    );
    expect(request).toMatchObject({ tabId, chunkIds: chunks.map((c) => c.id), expectedSeq: 7 });
    expect(request.chunks).toEqual(chunks);
  });

  it('refuses ids, roles and types that the JSON would have to escape', () => {
    const good = chunk({ role: 'user', type: 'text', data: { text: 'x' } });
    for (const bad of [
      { ...good, id: `${good.id}"` },
      { ...good, turnId: `"${good.turnId}` },
      { ...good, role: 'user"' },
      { ...good, type: 'text\\' },
    ]) {
      expect(() => validateAppend(tabId, [bad], undefined)).toThrow(InvalidInputError);
    }
  });
});
