import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateRequest } from './validate-request';

const user = (...content: unknown[]) => ({ role: 'user', content });
const assistant = (...content: unknown[]) => ({ role: 'assistant', content });
const text = (value: string) => ({ type: 'text', text: value });
const toolUse = (id: string, name = 'lookup') => ({ type: 'tool_use', id, name, input: {} });
const toolResult = (id: string, content: unknown = 'ok') => ({
  type: 'tool_result',
  tool_use_id: id,
  content,
});
const thinking = (value = 'hm', signature = 'sig') => ({
  type: 'thinking',
  thinking: value,
  signature,
});
const ephemeral = { type: 'ephemeral' };
/** A user's message, then an assistant message calling tool t1. */
const t1Called = [user(text('a')), assistant(toolUse('t1'))];

function request(messages: unknown[], extra: Record<string, unknown> = {}) {
  return { model: 'claude-test', max_tokens: 4096, messages, ...extra };
}

/** The paths of the violations, so each test states where the API would point. */
function paths(body: unknown): string[] {
  return validateRequest(body).map((violation) => violation.path);
}

describe('validateRequest', () => {
  it('accepts a plain valid request', () => {
    expect(validateRequest(request([user(text('hi'))]))).toEqual([]);
    expect(validateRequest(request([{ role: 'user', content: 'hi' }]))).toEqual([]);
  });

  it('requires model, max_tokens and messages', () => {
    expect(paths({})).toEqual(['model', 'max_tokens', 'messages']);
    expect(paths({ model: 'm', max_tokens: 0, messages: [user(text('x'))] })).toEqual([
      'max_tokens',
    ]);
    expect(paths({ model: '', max_tokens: 1.5, messages: [] })).toEqual([
      'model',
      'max_tokens',
      'messages',
    ]);
  });

  it('rejects a body that is not an object', () => {
    expect(paths(null)).toEqual(['']);
    expect(paths([1, 2])).toEqual(['']);
    expect(paths('text')).toEqual(['']);
  });

  it('requires the first message to be from the user', () => {
    expect(paths(request([assistant(text('hi')), user(text('x'))]))).toEqual(['messages.0.role']);
  });

  it('rejects empty and whitespace-only text blocks', () => {
    expect(paths(request([user(text(''))]))).toEqual(['messages.0.content.0']);
    expect(paths(request([user(text(' \n\t'))]))).toEqual(['messages.0.content.0']);
    expect(paths(request([{ role: 'user', content: '  ' }]))).toEqual(['messages.0.content']);
    expect(paths(request([user(text('ok '))]))).toEqual([]);
  });

  it('rejects a message with empty content, except a final assistant prefill', () => {
    expect(paths(request([user()]))).toEqual(['messages.0']);
    expect(paths(request([user(text('a')), assistant(), user(text('b'))]))).toEqual(['messages.1']);
    expect(paths(request([user(text('a')), assistant()]))).toEqual([]);
  });

  it('rejects a final assistant prefill ending in whitespace', () => {
    expect(paths(request([user(text('a')), assistant(text('b '))]))).toEqual([
      'messages.1.content.0',
    ]);
    expect(paths(request([user(text('a')), assistant(text('b'))]))).toEqual([]);
    expect(paths(request([user(text('a')), assistant(text('b ')), user(text('c'))]))).toEqual([]);
  });

  it('requires every tool_use to be answered in the very next message', () => {
    const dangling = request(t1Called);
    const violations = validateRequest(dangling);
    expect(violations.map((violation) => violation.path)).toEqual(['messages.1']);
    expect(violations[0]?.message).toContain('without `tool_result` blocks immediately after: t1');
    expect(paths(request([...t1Called, user(text('no result'))]))).toEqual(['messages.1']);
    expect(paths(request([...t1Called, user(toolResult('t1'))]))).toEqual([]);
  });

  it('looks for the results only in the very next message', () => {
    const body = request([
      ...t1Called,
      user(text('b')),
      assistant(text('c')),
      user(toolResult('t1')),
    ]);
    expect(paths(body)).toEqual(['messages.1', 'messages.4.content.0']);
  });

  it('rejects a tool_result that answers no tool_use of the previous message', () => {
    expect(paths(request([user(toolResult('t9'))]))).toEqual(['messages.0.content.0']);
    expect(paths(request([...t1Called, user(toolResult('t1'), toolResult('t2'))]))).toEqual([
      'messages.2.content.1',
    ]);
  });

  it('rejects two results for one tool_use and reused tool_use ids', () => {
    expect(paths(request([...t1Called, user(toolResult('t1'), toolResult('t1'))]))).toEqual([
      'messages.2.content.1',
    ]);
    expect(
      paths(
        request([
          ...t1Called,
          user(toolResult('t1')),
          assistant(toolUse('t1')),
          user(toolResult('t1')),
        ]),
      ),
    ).toEqual(['messages.3.content.0']);
  });

  it('requires tool_result blocks to come first in their message', () => {
    const base = [user(text('a')), assistant(toolUse('t1'), toolUse('t2'))];
    expect(paths(request([...base, user(text('x'), toolResult('t1'), toolResult('t2'))]))).toEqual([
      'messages.2.content.1',
      'messages.2.content.2',
    ]);
    expect(paths(request([...base, user(toolResult('t1'), toolResult('t2'), text('x'))]))).toEqual(
      [],
    );
  });

  it('merges consecutive same-role messages before checking pairing, as the API does', () => {
    const body = request([
      user(text('a')),
      assistant(text('b')),
      assistant(toolUse('t1')),
      user(toolResult('t1')),
      user(text('c')),
    ]);
    expect(paths(body)).toEqual([]);
  });

  it('rejects tool_use ids outside ^[a-zA-Z0-9_-]+$', () => {
    expect(
      paths(request([user(text('a')), assistant(toolUse('call:1')), user(toolResult('call:1'))])),
    ).toEqual(['messages.1.content.0.tool_use.id', 'messages.2.content.0.tool_result.tool_use_id']);
  });

  it('rejects an errored tool_result without content', () => {
    const errored = { type: 'tool_result', tool_use_id: 't1', is_error: true };
    expect(paths(request([...t1Called, user(errored)]))).toEqual([
      'messages.2.content.0.tool_result',
    ]);
    expect(paths(request([...t1Called, user({ ...errored, content: 'boom' })]))).toEqual([]);
    expect(paths(request([...t1Called, user(toolResult('t1', [text('')]))]))).toEqual([
      'messages.2.content.0.tool_result.content.0',
    ]);
  });

  it('rejects blocks in the wrong role and unknown block types', () => {
    expect(paths(request([user(thinking(), text('a'))]))).toEqual(['messages.0.content.0.type']);
    expect(paths(request([user(text('a')), assistant(toolResult('x'))]))).toEqual([
      'messages.1.content.0.type',
    ]);
    expect(paths(request([user({ type: 'video', url: 'x' })]))).toEqual([
      'messages.0.content.0.type',
    ]);
  });

  it('rejects thinking as the last block of an assistant message', () => {
    expect(paths(request([user(text('a')), assistant(thinking()), user(text('b'))]))).toEqual([
      'messages.1.content.0',
    ]);
    expect(
      paths(request([user(text('a')), assistant(thinking(), text('c')), user(text('b'))])),
    ).toEqual([]);
  });

  it('requires thinking to come before other blocks of an assistant message', () => {
    expect(
      paths(
        request([user(text('a')), assistant(text('c'), thinking(), text('d')), user(text('b'))]),
      ),
    ).toEqual(['messages.1.content.1']);
  });

  it('requires a signature on thinking blocks but accepts empty thinking text', () => {
    expect(
      paths(
        request([
          user(text('a')),
          assistant({ type: 'thinking', thinking: 'x' }, text('c')),
          user(text('b')),
        ]),
      ),
    ).toEqual(['messages.1.content.0.signature']);
    expect(
      paths(request([user(text('a')), assistant(thinking('', 'sig'), text('c')), user(text('b'))])),
    ).toEqual([]);
  });

  describe('with thinking enabled', () => {
    const enabled = { thinking: { type: 'enabled', budget_tokens: 2048 } };

    it('requires the assistant message before the final tool results to start with thinking', () => {
      const without = [
        user(text('a')),
        assistant(text('b'), toolUse('t1')),
        user(toolResult('t1')),
      ];
      expect(paths(request(without, enabled))).toEqual(['messages.1.content.0.type']);
      expect(paths(request(without))).toEqual([]);
      const withThinking = [
        user(text('a')),
        assistant(thinking(), text('b'), toolUse('t1')),
        user(toolResult('t1')),
      ];
      expect(paths(request(withThinking, enabled))).toEqual([]);
      const redacted = [
        user(text('a')),
        assistant({ type: 'redacted_thinking', data: 'opaque' }, toolUse('t1')),
        user(toolResult('t1')),
      ];
      expect(paths(request(redacted, enabled))).toEqual([]);
    });

    it('does not require thinking in earlier turns', () => {
      const body = [user(text('a')), assistant(text('b')), user(text('c'))];
      expect(paths(request(body, enabled))).toEqual([]);
    });

    it('requires a final assistant prefill to start with thinking', () => {
      expect(paths(request([user(text('a')), assistant(text('b'))], enabled))).toEqual([
        'messages.1.content.0.type',
      ]);
    });

    it('checks the budget against 1024 and max_tokens', () => {
      const body = [user(text('a'))];
      expect(paths(request(body, { thinking: { type: 'enabled', budget_tokens: 1000 } }))).toEqual([
        'thinking.enabled.budget_tokens',
      ]);
      expect(
        paths(
          request(body, { max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } }),
        ),
      ).toEqual(['max_tokens']);
      expect(paths(request(body, { thinking: { type: 'enabled' } }))).toEqual([
        'thinking.enabled.budget_tokens',
      ]);
      expect(paths(request(body, { thinking: { type: 'disabled' } }))).toEqual([]);
      expect(paths(request(body, { thinking: { type: 'sometimes' } }))).toEqual(['thinking.type']);
    });
  });

  it('allows at most 4 cache_control breakpoints across tools, system and messages', () => {
    const tools = [
      { name: 'a', input_schema: { type: 'object' }, cache_control: ephemeral },
      { name: 'b', input_schema: { type: 'object' } },
    ];
    const system = [{ type: 'text', text: 'sys', cache_control: ephemeral }];
    const marked = (value: string) => ({ ...text(value), cache_control: ephemeral });
    const four = [user(marked('a')), assistant(text('b')), user(marked('c'))];
    expect(paths(request(four, { tools, system }))).toEqual([]);
    const five = [user(marked('a')), assistant(marked('b')), user(marked('c'))];
    const violations = validateRequest(request(five, { tools, system }));
    expect(violations).toEqual([
      { path: '', message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' },
    ]);
  });

  it('rejects cache_control on thinking blocks and malformed markers', () => {
    const body = [
      user(text('a')),
      assistant({ ...thinking(), cache_control: ephemeral }, text('b')),
      user({ ...text('c'), cache_control: { type: 'forever' } }),
    ];
    expect(paths(request(body))).toEqual([
      'messages.1.content.0.cache_control',
      'messages.2.content.0.cache_control.type',
    ]);
  });

  it('checks tool definitions: name pattern, uniqueness, input_schema', () => {
    const body = [user(text('a'))];
    expect(
      paths(request(body, { tools: [{ name: 'bad name', input_schema: { type: 'object' } }] })),
    ).toEqual(['tools.0.name']);
    expect(
      paths(request(body, { tools: [{ name: 'x'.repeat(65), input_schema: { type: 'object' } }] })),
    ).toEqual(['tools.0.name']);
    expect(
      paths(
        request(body, {
          tools: [
            { name: 'a', input_schema: { type: 'object' } },
            { name: 'a', input_schema: { type: 'object' } },
          ],
        }),
      ),
    ).toEqual(['tools']);
    expect(paths(request(body, { tools: [{ name: 'a' }] }))).toEqual(['tools.0.input_schema']);
    expect(
      paths(request(body, { tools: [{ name: 'a', input_schema: { type: 'array' } }] })),
    ).toEqual(['tools.0.input_schema.type']);
  });

  it('checks tool_choice against the tools offered', () => {
    const tools = [{ name: 'a', input_schema: { type: 'object' } }];
    const body = [user(text('a'))];
    expect(paths(request(body, { tools, tool_choice: { type: 'tool', name: 'a' } }))).toEqual([]);
    expect(paths(request(body, { tools, tool_choice: { type: 'tool', name: 'b' } }))).toEqual([
      'tool_choice.name',
    ]);
    expect(paths(request(body, { tool_choice: { type: 'maybe' } }))).toEqual(['tool_choice.type']);
  });

  it('checks the system prompt and stop sequences', () => {
    const body = [user(text('a'))];
    expect(paths(request(body, { system: 'be brief' }))).toEqual([]);
    expect(paths(request(body, { system: [{ type: 'text', text: ' ' }] }))).toEqual(['system.0']);
    expect(paths(request(body, { system: 42 }))).toEqual(['system']);
    expect(paths(request(body, { stop_sequences: ['END', ' '] }))).toEqual(['stop_sequences.1']);
  });

  it('never throws, whatever JSON it is given', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(Array.isArray(validateRequest(value))).toBe(true);
      }),
    );
    const shaped = fc.record({
      model: fc.jsonValue(),
      max_tokens: fc.jsonValue(),
      messages: fc.array(
        fc.record({
          role: fc.constantFrom('user', 'assistant', 'system'),
          content: fc.oneof(
            fc.jsonValue(),
            fc.array(
              fc.record({
                type: fc.constantFrom('text', 'tool_use', 'tool_result', 'thinking', 'x'),
                text: fc.jsonValue(),
                id: fc.jsonValue(),
                tool_use_id: fc.jsonValue(),
                content: fc.jsonValue(),
                cache_control: fc.jsonValue(),
              }),
            ),
          ),
        }),
      ),
      thinking: fc.jsonValue(),
      tools: fc.jsonValue(),
    });
    fc.assert(
      fc.property(shaped, (value) => {
        expect(Array.isArray(validateRequest(value))).toBe(true);
      }),
    );
  });
});
