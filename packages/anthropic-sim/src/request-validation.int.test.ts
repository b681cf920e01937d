import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { useSimulatorClient } from './testing/simulator-client';

const model = 'claude-sonnet-4-6';
const sim = useSimulatorClient();

type Body = Record<string, unknown>;
const weatherTool = { name: 'get_weather', input_schema: { type: 'object', properties: {} } };
const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'get_weather', input: {} });
const toolResult = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'sunny' });
const text = (value: string) => ({ type: 'text', text: value });
const signedThinking = (thinking: string) => ({
  type: 'thinking',
  thinking,
  signature: sim.simulator.signer.sign(thinking),
});
const request = (messages: unknown[], extra: Body = {}): Body => ({
  model,
  max_tokens: 2048,
  tools: [weatherTool],
  messages,
  ...extra,
});
const thinkingOn = { thinking: { type: 'enabled', budget_tokens: 1024 } };
/** 'Weather?', an assistant message of `call` blocks, then a user message of `answer`. */
const toolTurn = (call: unknown[], answer: unknown, extra: Body = {}) =>
  request(
    [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: call },
      { role: 'user', content: answer },
    ],
    extra,
  );
/** 'Hi', an assistant message of `reply` blocks, then 'Go on'. */
const exchange = (reply: unknown[]) =>
  request([
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: reply },
    { role: 'user', content: 'Go on' },
  ]);

/** Each API rule: a request it rejects (naming `path`) and the nearest request it accepts. */
const rules: {
  rule: string;
  invalid: () => Body;
  valid: () => Body;
  path: string;
  says: RegExp;
}[] = [
  {
    rule: 'a tool_use needs its tool_result in the very next user message',
    invalid: () => toolTurn([toolUse('toolu_1')], 'Well?'),
    valid: () => toolTurn([toolUse('toolu_1')], [toolResult('toolu_1')]),
    path: 'messages.1',
    says: /tool_result/,
  },
  {
    rule: 'tool_result blocks come first in their user message',
    invalid: () => toolTurn([toolUse('toolu_1')], [text('By the way'), toolResult('toolu_1')]),
    valid: () => toolTurn([toolUse('toolu_1')], [toolResult('toolu_1'), text('By the way')]),
    path: 'messages.2.content.1',
    says: /must come first/,
  },
  {
    rule: 'tool_use ids match ^[a-zA-Z0-9_-]+$',
    invalid: () => toolTurn([toolUse('toolu.1')], [toolResult('toolu.1')]),
    valid: () => toolTurn([toolUse('toolu-1_A')], [toolResult('toolu-1_A')]),
    path: 'messages.1.content.0.tool_use.id',
    says: /pattern/,
  },
  {
    rule: 'text blocks are not empty',
    invalid: () => request([{ role: 'user', content: [text('Hi'), text('')] }]),
    valid: () => request([{ role: 'user', content: [text('Hi'), text('there')] }]),
    path: 'messages.0.content.1',
    says: /non-empty/,
  },
  {
    rule: 'text blocks are not whitespace only',
    invalid: () => request([{ role: 'user', content: [text(' \n\t')] }]),
    valid: () => request([{ role: 'user', content: [text(' x ')] }]),
    path: 'messages.0.content.0',
    says: /non-whitespace/,
  },
  {
    rule: 'messages have content, except a final assistant prefill',
    invalid: () =>
      request([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [] },
        { role: 'user', content: 'Again' },
      ]),
    valid: () =>
      request([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [] },
      ]),
    path: 'messages.1',
    says: /non-empty content/,
  },
  {
    rule: 'with thinking on, the final assistant message of a tool turn starts with thinking',
    invalid: () => toolTurn([toolUse('toolu_1')], [toolResult('toolu_1')], thinkingOn),
    valid: () =>
      toolTurn(
        [signedThinking('Check it.'), toolUse('toolu_1')],
        [toolResult('toolu_1')],
        thinkingOn,
      ),
    path: 'messages.1.content.0.type',
    says: /Expected `thinking`/,
  },
  {
    rule: 'a thinking block is not the last block of an assistant message',
    invalid: () => exchange([signedThinking('Hmm.')]),
    valid: () => exchange([signedThinking('Hmm.'), text('Hello')]),
    path: 'messages.1.content.0',
    says: /final block/,
  },
  {
    rule: 'a thinking block whose text changed fails its signature',
    invalid: () =>
      exchange([
        { ...signedThinking('Original thought.'), thinking: 'Original thought!' },
        text('Hello'),
      ]),
    valid: () => exchange([signedThinking('Original thought.'), text('Hello')]),
    path: 'messages.1.content.0',
    says: /^Invalid signature in thinking block$/,
  },
  {
    rule: 'a thinking block whose signature changed is rejected',
    invalid: () => {
      const thinking = signedThinking('Original thought.');
      const flipped = `${thinking.signature.slice(0, 5)}${thinking.signature[5] === 'A' ? 'B' : 'A'}${thinking.signature.slice(6)}`;
      return exchange([{ ...thinking, signature: flipped }, text('Hello')]);
    },
    valid: () => exchange([signedThinking('Original thought.'), text('Hello')]),
    path: 'messages.1.content.0',
    says: /^Invalid signature in thinking block$/,
  },
  {
    rule: 'at most 4 cache_control breakpoints',
    invalid: () =>
      request([
        {
          role: 'user',
          content: ['a', 'b', 'c', 'd', 'e'].map((value) => ({
            ...text(value),
            cache_control: { type: 'ephemeral' },
          })),
        },
      ]),
    valid: () =>
      request([
        {
          role: 'user',
          content: ['a', 'b', 'c', 'd', 'e'].map((value, index) => ({
            ...text(value),
            ...(index < 4 ? { cache_control: { type: 'ephemeral' } } : {}),
          })),
        },
      ]),
    path: '',
    says: /maximum of 4 blocks with cache_control/,
  },
  {
    rule: 'thinking budget_tokens is at least 1024',
    invalid: () =>
      request([{ role: 'user', content: 'Hi' }], {
        thinking: { type: 'enabled', budget_tokens: 1023 },
      }),
    valid: () => request([{ role: 'user', content: 'Hi' }], thinkingOn),
    path: 'thinking.enabled.budget_tokens',
    says: /1024/,
  },
  {
    rule: 'thinking budget_tokens is below max_tokens',
    invalid: () =>
      request([{ role: 'user', content: 'Hi' }], {
        max_tokens: 1024,
        thinking: { type: 'enabled', budget_tokens: 1024 },
      }),
    valid: () =>
      request([{ role: 'user', content: 'Hi' }], {
        max_tokens: 1025,
        thinking: { type: 'enabled', budget_tokens: 1024 },
      }),
    path: 'max_tokens',
    says: /budget_tokens/,
  },
  {
    rule: 'tool names match ^[a-zA-Z0-9_-]{1,64}$',
    invalid: () =>
      request([{ role: 'user', content: 'Hi' }], {
        tools: [{ ...weatherTool, name: 'get weather' }],
      }),
    valid: () =>
      request([{ role: 'user', content: 'Hi' }], {
        tools: [{ ...weatherTool, name: 'get-weather_2' }],
      }),
    path: 'tools.0.name',
    says: /pattern/,
  },
  {
    rule: 'model, max_tokens and messages are required',
    invalid: () => ({ model, messages: [{ role: 'user', content: 'Hi' }] }),
    valid: () => ({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
    path: 'max_tokens',
    says: /Field required/,
  },
];

async function send(body: Body) {
  return sim.client.messages
    .create(body as unknown as Anthropic.MessageCreateParamsNonStreaming)
    .catch((caught: unknown) => caught);
}

describe('request validation', () => {
  it.each(rules)('$rule', async ({ invalid, valid, path, says }) => {
    const rejected = await send(invalid());
    expect(rejected).toBeInstanceOf(Anthropic.BadRequestError);
    const error = rejected as InstanceType<typeof Anthropic.BadRequestError>;
    expect(error.type).toBe('invalid_request_error');
    const message = error.apiMessage ?? '';
    const prefix = path ? `${path}: ` : '';
    expect(message.startsWith(prefix)).toBe(true);
    expect(message.slice(prefix.length)).toMatch(says);

    const accepted = await send(valid());
    expect(accepted).not.toBeInstanceOf(Error);
    expect(accepted).toMatchObject({ type: 'message', role: 'assistant' });
  });

  it('accepts a thinking block replayed byte-exact from an earlier streamed reply', async () => {
    const opening = {
      role: 'user' as const,
      content: 'Check [[sim: think "Let me look."]] [[sim: tool get_weather {}]]',
    };
    const params = {
      model,
      max_tokens: 2048,
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
      tools: [weatherTool as Anthropic.Tool],
    };
    const first = await sim.client.messages
      .stream({ ...params, messages: [opening] })
      .finalMessage();
    const call = first.content.find((block) => block.type === 'tool_use');
    if (!call) throw new Error('expected a tool call');
    const second = await sim.client.messages.create({
      ...params,
      messages: [
        opening,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'rain' }] },
      ],
    });
    expect(second.content.at(-1)).toMatchObject({
      type: 'text',
      text: expect.stringContaining('rain'),
    });
  });
});
