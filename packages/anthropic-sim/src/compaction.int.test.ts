import Anthropic, { APIError } from '@anthropic-ai/sdk';
import type {
  BetaContentBlockParam,
  BetaMessageParam,
  MessageCreateParamsNonStreaming,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { COMPACTION_BETA, reduceStream } from '@chunklog/chunk-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { useSimulatorClient } from './testing/simulator-client';

const model = 'claude-sonnet-4-6';
const betas = [COMPACTION_BETA];

const sim = useSimulatorClient({ contextWindowTokens: 2_000 });

const user = (text: string): BetaMessageParam => ({ role: 'user', content: text });
const assistant = (text: string): BetaMessageParam => ({ role: 'assistant', content: text });

/** A conversation of `turns` exchanges of about 100 tokens each. */
function conversation(turns: number, label = 'talk'): BetaMessageParam[] {
  return Array.from({ length: turns }, (_, index) => [
    user(`${label} ${index}: ${'words about the weather '.repeat(16)}`),
    assistant(`Answer ${index}: ${'it is sunny and warm '.repeat(4)}`),
  ]).flat();
}

async function compact(messages: BetaMessageParam[], extra: object = {}) {
  return sim.client.beta.messages.create({
    model,
    max_tokens: 1024,
    messages,
    compaction: { type: 'summarize' },
    betas,
    ...extra,
  });
}

/** The error a request is refused with (the test fails when it is not refused). */
async function refusal(promise: Promise<unknown>): Promise<APIError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

describe('the context window', () => {
  it('refuses a prompt longer than the window with the API’s 400', async () => {
    const error = await refusal(
      sim.client.messages.create({
        model,
        max_tokens: 100,
        messages: [...conversation(20), user('next')] as Anthropic.MessageParam[],
      }),
    );
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.apiMessage).toMatch(/^prompt is too long: \d+ tokens > 2000 maximum$/);
  });

  it('stops a reply where the window is full, with stop reason model_context_window_exceeded', async () => {
    const messages = [...conversation(8), user('Tell me more. [[sim: words 2000]]')];
    const counted = await sim.client.messages.countTokens({
      model,
      messages: messages as Anthropic.MessageParam[],
    });
    const message = await sim.client.messages.create({
      model,
      max_tokens: 4096,
      messages: messages as Anthropic.MessageParam[],
    });
    expect(message.stop_reason).toBe('model_context_window_exceeded');
    expect(message.usage.output_tokens).toBe(2_000 - counted.input_tokens);
  });

  it('takes another window from a context-window directive', async () => {
    const error = await refusal(
      sim.client.messages.create({
        model,
        max_tokens: 100,
        messages: [{ role: 'user', content: `${'x'.repeat(4_000)} [[sim: context-window 500]]` }],
      }),
    );
    expect(error.apiMessage).toMatch(/^prompt is too long: \d+ tokens > 500 maximum$/);
  });
});

describe('compaction', () => {
  it('answers only a signed compaction block, the same streamed and not', async () => {
    const messages = [...conversation(3), user('What now?')];
    const message = await compact(messages);
    expect(message.stop_reason).toBe('compaction');
    expect(message.content).toHaveLength(1);
    const block = message.content[0];
    expect(block).toMatchObject({
      type: 'compaction',
      content: expect.stringContaining('The latest request: "What now?"'),
      encrypted_content: expect.any(String),
      signature: expect.any(String),
      tool_changes: [],
    });
    const streamed = await sim.client.beta.messages
      .stream({ model, max_tokens: 1024, messages, compaction: { type: 'summarize' }, betas })
      .finalMessage();
    expect(streamed.content).toEqual(message.content);
    expect(streamed.stop_reason).toBe('compaction');
  });

  it('streams the block as a null-content start and one compaction_delta, which the stream reducer skips', async () => {
    const stream = await sim.client.beta.messages.create({
      model,
      max_tokens: 1024,
      messages: [...conversation(2), user('Stream it.')],
      compaction: { type: 'summarize' },
      betas,
      stream: true,
    });
    const events: unknown[] = [];
    for await (const event of stream) events.push(event);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'content_block_start',
        content_block: expect.objectContaining({ type: 'compaction', content: null }),
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ delta: expect.objectContaining({ type: 'compaction_delta' }) }),
    );
    // The worker's reducer makes no chunk of it: the block is stored from the final message.
    const reduced = reduceStream(events);
    expect(reduced.operations).toEqual([]);
    expect(reduced.state).toMatchObject({ stopReason: 'compaction', finished: true });
  });

  it('summarizes a conversation past the window, and the block then stands in for it', async () => {
    const messages = [...conversation(20), user('Where were we?')];
    const summary = await compact(messages);
    const block = summary.content[0] as BetaContentBlockParam;
    const next = await sim.client.beta.messages.create({
      model,
      max_tokens: 200,
      messages: [{ role: 'assistant', content: [block] }, user('Go on.')],
      betas,
    });
    expect(next.stop_reason).toBe('end_turn');
    expect(next.usage.input_tokens).toBeLessThan(300);
  });

  it('follows instructions and keeps a chain of summaries bounded', async () => {
    let messages: BetaMessageParam[] = [...conversation(3), user('first')];
    let length = 0;
    for (let round = 0; round < 5; round += 1) {
      const summary = await compact(messages, {
        compaction: { type: 'summarize', instructions: 'Keep the city names.' },
      });
      const block = summary.content[0] as BetaContentBlockParam & { content: string };
      expect(block.content).toContain('Summarized as instructed: "Keep the city names."');
      length = block.content.length;
      messages = [{ role: 'assistant', content: [block] }, ...conversation(2, `round ${round}`)];
      messages.push(user(`round ${round} done`));
    }
    expect(length).toBeLessThan(700);
  });

  it('refuses the parameter and the block without the beta header', async () => {
    const parameter = await refusal(
      sim.client.beta.messages.create({
        model,
        max_tokens: 100,
        messages: [user('hi')],
        compaction: { type: 'summarize' },
      }),
    );
    expect(parameter.apiMessage).toBe('compaction: Extra inputs are not permitted');
    const block = (await compact([user('hi')])).content[0] as BetaContentBlockParam;
    const replay = await refusal(
      sim.client.beta.messages.create({
        model,
        max_tokens: 100,
        messages: [{ role: 'assistant', content: [block] }, user('next')],
      }),
    );
    expect(replay.apiMessage).toMatch(/^messages\.0\.content\.0\.type: Input tag 'compaction'/);
  });

  it('counts tokens ignoring the parameter', async () => {
    const messages = [...conversation(2), user('count me')];
    const plain = await sim.client.beta.messages.countTokens({ model, messages, betas });
    const withParameter = await sim.client.beta.messages.countTokens({
      model,
      messages,
      betas,
      compaction: { type: 'summarize' },
    } as Parameters<typeof sim.client.beta.messages.countTokens>[0]);
    expect(withParameter.input_tokens).toBe(plain.input_tokens);
  });
});

describe('compaction refusals, each with its error code and SDK class', () => {
  let block: BetaContentBlockParam & { content: string; signature: string };

  beforeAll(async () => {
    const summary = await compact([...conversation(2), user('summarize this')]);
    block = summary.content[0] as typeof block;
  });

  async function expectRefusal(
    request: Promise<unknown>,
    errorCode: string,
    className: string,
    status = 400,
  ) {
    const error = await refusal(request);
    expect(error.status).toBe(status);
    expect(error.errorCode).toBe(errorCode);
    expect(error.name).toBe(className);
  }

  const send = (
    messages: BetaMessageParam[],
    extra: Partial<MessageCreateParamsNonStreaming> = {},
  ) => sim.client.beta.messages.create({ model, max_tokens: 100, messages, betas, ...extra });

  it('compaction_block_misplaced: the block after the first block', async () => {
    await expectRefusal(
      send([user('first'), { role: 'assistant', content: [block] }, user('next')]),
      'compaction_block_misplaced',
      'CompactionBlockMisplacedError',
    );
  });

  it('compaction_block_ambiguous: two blocks with content', async () => {
    await expectRefusal(
      send([
        { role: 'assistant', content: [block] },
        user('next'),
        { role: 'assistant', content: [block] },
        user('again'),
      ]),
      'compaction_block_ambiguous',
      'CompactionBlockAmbiguousError',
    );
  });

  it('compaction_content_mismatch: content that differs from its signature', async () => {
    await expectRefusal(
      send([
        {
          role: 'assistant',
          content: [{ ...block, content: `${block.content}!` } as typeof block],
        },
        user('x'),
      ]),
      'compaction_content_mismatch',
      'CompactionContentMismatchError',
    );
  });

  it('compaction_signature_invalid: a signature it did not make', async () => {
    const forged = `${block.signature.slice(0, -2)}AA`;
    await expectRefusal(
      send([
        { role: 'assistant', content: [{ ...block, signature: forged } as typeof block] },
        user('x'),
      ]),
      'compaction_signature_invalid',
      'CompactionSignatureInvalidError',
    );
  });

  it('compaction_tool_changes_mismatch: tool changes that differ from the ones returned', async () => {
    const changed = {
      ...block,
      tool_changes: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'x' } }],
    } as BetaContentBlockParam;
    await expectRefusal(
      send([{ role: 'assistant', content: [changed] }, user('x')]),
      'compaction_tool_changes_mismatch',
      'CompactionToolChangesMismatchError',
    );
  });

  it('compaction_incomplete_turn: a compaction request that ends on an assistant turn', async () => {
    await expectRefusal(
      compact([user('hi'), assistant('Hello')]),
      'compaction_incomplete_turn',
      'CompactionIncompleteTurnError',
    );
  });

  it('compaction_nothing_to_summarize: nothing but a failed compaction', async () => {
    const failed = { type: 'compaction', content: null, encrypted_content: null } as const;
    await expectRefusal(
      compact([{ role: 'user', content: [failed] }]),
      'compaction_nothing_to_summarize',
      'CompactionNothingToSummarizeError',
    );
  });

  it('compaction_unavailable: a 529 the SDK retries, by directive', async () => {
    const messages = [user('hi [[sim: compaction-unavailable times=1]]')];
    await expectRefusal(
      compact(messages),
      'compaction_unavailable',
      'CompactionUnavailableError',
      529,
    );
    const retried = await compact(messages);
    expect(retried.stop_reason).toBe('compaction');
    const retrying = new Anthropic({ baseURL: sim.simulator.url, apiKey: 'test' });
    const recovered = await retrying.beta.messages.create({
      model,
      max_tokens: 100,
      messages: [user('again [[sim: compaction-unavailable times=2]]')],
      compaction: { type: 'summarize' },
      betas,
    });
    expect(recovered.stop_reason).toBe('compaction');
  });
});

describe('cache diagnostics', () => {
  const system = 'You are terse.';
  const tools = [
    {
      name: 'lookup',
      description: 'Looks things up',
      input_schema: { type: 'object' as const, properties: {} },
    },
  ];
  const base = { model, max_tokens: 100, system, tools };

  it('says nothing when not asked, and no miss when entries were only appended', async () => {
    const first = await sim.client.beta.messages.create({ ...base, messages: [user('one')] });
    expect(first.diagnostics).toBeNull();
    const opening = await sim.client.beta.messages.create({
      ...base,
      messages: [user('one')],
      diagnostics: { previous_message_id: null },
    });
    expect(opening.diagnostics).toEqual({ cache_miss_reason: null });
    const next = await sim.client.beta.messages.create({
      ...base,
      messages: [user('one'), assistant('Done.'), user('two')],
      diagnostics: { previous_message_id: opening.id },
    });
    expect(next.diagnostics).toEqual({ cache_miss_reason: null });
  });

  it('names what changed: model, tools, system, an earlier message, or no record', async () => {
    const messages = [...conversation(2), user('three')];
    const previous = await sim.client.beta.messages.create({ ...base, messages });
    const reason = async (request: Partial<MessageCreateParamsNonStreaming>) => {
      const message = await sim.client.beta.messages.create({
        ...base,
        messages,
        ...request,
        diagnostics: { previous_message_id: previous.id },
      });
      return message.diagnostics?.cache_miss_reason;
    };
    expect(await reason({ model: 'claude-opus-4-6' })).toMatchObject({ type: 'model_changed' });
    expect(await reason({ tools: [] })).toMatchObject({ type: 'tools_changed' });
    expect(await reason({ system: 'You are verbose.' })).toMatchObject({
      type: 'system_changed',
      cache_missed_input_tokens: expect.any(Number),
    });
    const changed = await reason({ messages: [user('other'), ...messages.slice(1)] });
    expect(changed).toMatchObject({ type: 'messages_changed' });
    expect(
      changed && 'cache_missed_input_tokens' in changed && changed.cache_missed_input_tokens,
    ).toBeGreaterThan(100);
    expect(
      await reason({ thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2048 }),
    ).toEqual({ type: 'unavailable' });
    const unknown = await sim.client.beta.messages.create({
      ...base,
      messages,
      diagnostics: { previous_message_id: 'msg_unknown' },
    });
    expect(unknown.diagnostics?.cache_miss_reason).toEqual({ type: 'previous_message_not_found' });
  });

  it('reports the compaction itself as the messages change that it is, streamed too', async () => {
    const messages = [...conversation(3), user('before')];
    const previous = await sim.client.beta.messages.create({ ...base, messages, betas });
    const summary = await compact(messages, { system, tools });
    const after = await sim.client.beta.messages
      .stream({
        ...base,
        messages: [
          { role: 'assistant', content: summary.content as BetaContentBlockParam[] },
          user('after'),
        ],
        diagnostics: { previous_message_id: previous.id },
        betas,
      })
      .finalMessage();
    expect(after.diagnostics?.cache_miss_reason).toMatchObject({ type: 'messages_changed' });
  });
});
