import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtinTools } from './builtin-tools';
import { evaluateArithmetic } from './evaluate-arithmetic';
import { createToolRegistry, defineTool } from './tool-registry';

const context = { tabId: 't', turnId: 'u', callId: 'c', signal: new AbortController().signal };

describe('createToolRegistry', () => {
  it('describes tools with JSON schemas derived from their zod input schemas', () => {
    const registry = createToolRegistry([
      defineTool({
        name: 'lookup',
        description: 'Looks a word up',
        inputSchema: z.object({
          word: z.string().describe('the word'),
          limit: z.number().optional(),
        }),
        run: async ({ word }) => word.toUpperCase(),
      }),
    ]);
    expect(registry.describe()).toEqual([
      {
        name: 'lookup',
        description: 'Looks a word up',
        input_schema: {
          type: 'object',
          properties: {
            word: { type: 'string', description: 'the word' },
            limit: { type: 'number' },
          },
          required: ['word'],
        },
      },
    ]);
  });

  it('returns the very same tool objects on every call, so requests stay byte-stable', () => {
    const registry = createToolRegistry(builtinTools());
    expect(registry.describe()[0]).toBe(registry.describe()[0]);
    expect(registry.describe(['calculator']).map((tool) => tool.name)).toEqual(['calculator']);
  });

  it('validates arguments and turns failures into error outcomes instead of throwing', async () => {
    const registry = createToolRegistry(builtinTools());
    await expect(registry.run('calculator', { expression: '2*(3+4)^2' }, context)).resolves.toEqual(
      {
        result: { value: 98 },
        isError: false,
      },
    );
    const invalid = await registry.run('calculator', { expression: 42 }, context);
    expect(invalid.isError).toBe(true);
    expect(String(invalid.result)).toContain('Invalid input for calculator');
    const failing = await registry.run('calculator', { expression: '1/0' }, context);
    expect(failing).toEqual({ result: 'The result is not a finite number', isError: true });
    const unknown = await registry.run('nope', {}, context);
    expect(unknown).toEqual({ result: 'Unknown tool: nope', isError: true });
  });

  it('rejects tool names the API would refuse', () => {
    expect(() =>
      defineTool({
        name: 'has space',
        description: '',
        inputSchema: z.object({}),
        run: async () => 1,
      }),
    ).toThrow();
  });

  it('stops the sleep tool when its call is aborted', async () => {
    const registry = createToolRegistry(builtinTools());
    const controller = new AbortController();
    const pending = registry.run(
      'sleep',
      { milliseconds: 10_000 },
      { ...context, signal: controller.signal },
    );
    controller.abort();
    await expect(pending).resolves.toEqual({ result: 'cancelled', isError: true });
  });
});

describe('evaluateArithmetic', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ^ 3 ^ 2', 512],
    ['-2 ^ 2', 4],
    ['10 % 4 - -1', 3],
    ['sqrt(16) + abs(-2) + floor(2.7)', 8],
    ['1.5e3 / 3', 500],
  ])('evaluates %s', (expression, value) => {
    expect(evaluateArithmetic(expression)).toBe(value);
  });

  it.each(['', '1 +', '2 ** 3', 'process.exit()', '(1', '1 2'])('refuses %j', (expression) => {
    expect(() => evaluateArithmetic(expression)).toThrow();
  });
});
