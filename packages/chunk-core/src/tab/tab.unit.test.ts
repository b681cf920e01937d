import { describe, expect, it } from 'vitest';
import { MAX_OUTPUT_TOKENS, TabConfigSchema, TabSchema } from './tab';

describe('TabConfigSchema', () => {
  it('accepts a thinking budget below maxTokens, or without maxTokens', () => {
    expect(
      TabConfigSchema.safeParse({ maxTokens: 1025, thinking: { budgetTokens: 1024 } }).success,
    ).toBe(true);
    expect(TabConfigSchema.safeParse({ thinking: { budgetTokens: 100_000 } }).success).toBe(true);
    expect(TabConfigSchema.safeParse({ maxTokens: 10 }).success).toBe(true);
  });

  it('refuses a thinking budget at or above maxTokens, naming the budget', () => {
    for (const maxTokens of [1024, 2000]) {
      const parsed = TabConfigSchema.safeParse({ maxTokens, thinking: { budgetTokens: 2000 } });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual([
        'thinking.budgetTokens',
      ]);
      expect(parsed.error?.issues[0]?.message).toMatch(/below maxTokens/);
    }
  });

  it('refuses a budget under 1024 or one no max_tokens could exceed', () => {
    expect(TabConfigSchema.safeParse({ thinking: { budgetTokens: 1023 } }).success).toBe(false);
    expect(
      TabConfigSchema.safeParse({ thinking: { budgetTokens: MAX_OUTPUT_TOKENS } }).success,
    ).toBe(false);
    expect(
      TabConfigSchema.safeParse({ thinking: { budgetTokens: MAX_OUTPUT_TOKENS - 1 } }).success,
    ).toBe(true);
  });
});

describe('TabConfigSchema compaction', () => {
  it('accepts a threshold from 0.1 to 0.95, instructions, and turning the threshold off', () => {
    for (const compaction of [
      {},
      { threshold: 0.1 },
      { threshold: 0.95 },
      { instructions: 'Keep every city named.' },
      { enabled: false },
    ]) {
      expect(TabConfigSchema.safeParse({ compaction }).success).toBe(true);
    }
  });

  it('refuses a threshold out of range, empty instructions and unknown fields', () => {
    for (const compaction of [
      { threshold: 0.05 },
      { threshold: 0.96 },
      { threshold: 1 },
      { instructions: '' },
      { enabled: 'no' },
      { window: 1000 },
    ]) {
      const parsed = TabConfigSchema.safeParse({ compaction });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.path[0]).toBe('compaction');
    }
  });
});

/** A tab as stored, with the given config (ids and times are fixed). */
function storedTab(id: number, config: unknown) {
  return {
    id: `00000000-0000-4000-8000-00000000000${id}`,
    parentTabId: null,
    forkOf: null,
    forkSeq: null,
    title: 'old',
    config,
    status: 'idle',
    activeTurnId: null,
    waiting: null,
    lastSeq: 0,
    usage: {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    },
    createdAt: 1,
    updatedAt: 1,
  };
}

describe('TabSchema', () => {
  it('still reads a tab stored before the bound, with a budget above its maxTokens', () => {
    const tab = storedTab(1, { maxTokens: 2000, thinking: { budgetTokens: 4000 } });
    expect(TabSchema.parse(tab).config).toEqual(tab.config);
  });

  it('still reads a tab stored before the bound with a budget no max_tokens can exceed', () => {
    // Creation took any budget from 1024 up until the bound: such a tab must not turn every
    // GET of it, and every list page holding it, into a response that fails its schema.
    const tab = storedTab(2, { thinking: { budgetTokens: 200_000 } });
    expect(TabSchema.parse(tab).config).toEqual(tab.config);
    // New tabs are still held to the bound.
    expect(TabConfigSchema.safeParse(tab.config).success).toBe(false);
  });
});
