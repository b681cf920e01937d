import { describe, expect, it } from 'vitest';
import { tabRequestOptions } from './tab-request-options';

const defaults = { model: 'claude-default', maxTokens: 4096 };

describe('tabRequestOptions', () => {
  it('takes the defaults where the tab sets nothing', () => {
    expect(tabRequestOptions({}, defaults)).toEqual({ model: 'claude-default', maxTokens: 4096 });
  });

  it("prefers the tab's model, token limit and system prompt", () => {
    expect(
      tabRequestOptions({ model: 'claude-tab', maxTokens: 100, system: 'Be brief.' }, defaults),
    ).toEqual({ model: 'claude-tab', maxTokens: 100, system: 'Be brief.' });
  });

  it('raises max tokens above a thinking budget that would not fit', () => {
    const options = tabRequestOptions(
      { maxTokens: 2000, thinking: { budgetTokens: 4000 } },
      defaults,
    );
    expect(options.maxTokens).toBe(5024);
    expect(options.thinking).toEqual({ budgetTokens: 4000 });
    expect(
      tabRequestOptions({ maxTokens: 9000, thinking: { budgetTokens: 1024 } }, defaults).maxTokens,
    ).toBe(9000);
  });
});
