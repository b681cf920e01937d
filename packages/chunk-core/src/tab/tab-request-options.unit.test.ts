import { validateRequest } from '@chunklog/anthropic-sim';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildRequest } from '../wire/build-request';
import { MAX_OUTPUT_TOKENS, TabConfigSchema } from './tab';
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

  it("sends a tab's own maxTokens above its budget as is", () => {
    expect(
      tabRequestOptions({ maxTokens: 9000, thinking: { budgetTokens: 1024 } }, defaults).maxTokens,
    ).toBe(9000);
    expect(
      tabRequestOptions({ maxTokens: 4096, thinking: { budgetTokens: 4000 } }, defaults).maxTokens,
    ).toBe(4096);
  });

  it('raises the default max tokens above a budget, leaving room for the answer', () => {
    expect(tabRequestOptions({ thinking: { budgetTokens: 8000 } }, defaults).maxTokens).toBe(9024);
    expect(tabRequestOptions({ thinking: { budgetTokens: 2000 } }, defaults).maxTokens).toBe(4096);
    expect(
      tabRequestOptions({ thinking: { budgetTokens: MAX_OUTPUT_TOKENS - 1 } }, defaults).maxTokens,
    ).toBe(MAX_OUTPUT_TOKENS);
  });

  it('raises max tokens above the budget of a tab stored before the bound', () => {
    const options = tabRequestOptions(
      { maxTokens: 2000, thinking: { budgetTokens: 4000 } },
      defaults,
    );
    expect(options.maxTokens).toBe(5024);
    expect(options.thinking).toEqual({ budgetTokens: 4000 });
  });

  it('builds a request the API accepts for any token settings, stored or new', () => {
    const tokens = fc.integer({ min: 1, max: MAX_OUTPUT_TOKENS });
    fc.assert(
      fc.property(
        fc.option(tokens, { nil: undefined }),
        fc.option(fc.integer({ min: 1024, max: MAX_OUTPUT_TOKENS - 1 }), { nil: undefined }),
        tokens,
        (maxTokens, budgetTokens, defaultMaxTokens) => {
          const config = {
            ...(maxTokens === undefined ? {} : { maxTokens }),
            ...(budgetTokens === undefined ? {} : { thinking: { budgetTokens } }),
          };
          const options = tabRequestOptions(config, { model: 'm', maxTokens: defaultMaxTokens });
          const request = buildRequest({ chunks: [], ...options });
          expect(
            validateRequest(request).filter((v) => /max_tokens|thinking/.test(v.path)),
          ).toEqual([]);
          expect(options.maxTokens).toBeLessThanOrEqual(MAX_OUTPUT_TOKENS);
          // A config the schema accepts gets exactly the limit it asked for.
          if (maxTokens !== undefined && TabConfigSchema.safeParse(config).success) {
            expect(options.maxTokens).toBe(maxTokens);
          }
        },
      ),
    );
  });
});
