import { describe, expect, it } from 'vitest';
import { mcpToolName, mcpToolNames } from './mcp-tool-names';

const API_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

describe('mcpToolName', () => {
  it('prefixes a valid name with the server name', () => {
    expect(mcpToolName('docs', 'search')).toBe('docs_search');
  });

  it('makes an invalid or overlong name valid, and distinct from its look-alikes', () => {
    const dotted = mcpToolName('docs', 'search.v2');
    const spaced = mcpToolName('docs', 'search v2');
    const long = mcpToolName('docs', 'x'.repeat(100));
    for (const name of [dotted, spaced, long]) expect(name).toMatch(API_TOOL_NAME);
    expect(dotted).toMatch(/^docs_search_v2_[0-9a-f]{8}$/);
    expect(dotted).not.toBe(spaced);
    expect(dotted).not.toBe(mcpToolName('docs', 'search_v2'));
    expect(long).toHaveLength(64);
  });
});

describe('mcpToolNames', () => {
  it('names a list the same in any order, sorted by public name', () => {
    const tools = ['zeta', 'alpha', 'b.c', 'b c'];
    const forward = mcpToolNames('s', tools);
    const backward = mcpToolNames('s', [...tools].reverse());
    expect(backward).toEqual(forward);
    expect(forward.named.map(([name]) => name)).toEqual(
      [...forward.named.map(([name]) => name)].sort(),
    );
    expect(forward.named.find(([, original]) => original === 'alpha')?.[0]).toBe('s_alpha');
    expect(forward.dropped).toEqual([]);
  });

  it('keeps a name when other tools come and go', () => {
    const before = new Map(
      mcpToolNames('s', ['a.b', 'c']).named.map(([name, tool]) => [tool, name]),
    );
    const after = new Map(
      mcpToolNames('s', ['a.b', 'a b', 'c', 'd']).named.map(([name, tool]) => [tool, name]),
    );
    expect(after.get('a.b')).toBe(before.get('a.b'));
    expect(after.get('c')).toBe(before.get('c'));
  });

  it('lists a duplicated tool once', () => {
    expect(mcpToolNames('s', ['a', 'a']).named).toEqual([['s_a', 'a']]);
  });
});
