import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { createSimulator, type Simulator } from '../create-simulator';
import { createManualClock, type ManualClock } from '../manual-clock';
import { estimateTokens } from './estimate-tokens';
import { listPromptBlocks } from './list-prompt-blocks';
import { createPromptCache } from './prompt-cache';

const model = 'claude-sonnet-4-6';
const ephemeral = { type: 'ephemeral' as const };
// About 1500 tokens: above the 1024-token minimum on its own.
const longSystem = `You are a careful assistant. ${'Keep answers short and exact. '.repeat(200)}`;
const systemTokens = estimateTokens({ type: 'text', text: longSystem });

const opened: Simulator[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((simulator) => simulator.close()));
});

async function start(clock?: ManualClock) {
  const simulator = await createSimulator({ logger: () => {}, ...(clock ? { clock } : {}) });
  opened.push(simulator);
  return new Anthropic({ baseURL: simulator.url, apiKey: 'test', maxRetries: 0 });
}

type Usage = Anthropic.Usage;
const totalInput = (usage: Usage) =>
  usage.input_tokens +
  (usage.cache_read_input_tokens ?? 0) +
  (usage.cache_creation_input_tokens ?? 0);

/** The request of one step: breakpoints on the system prompt and on the latest user block. */
function withRollingBreakpoint(history: Anthropic.MessageParam[]): Anthropic.MessageParam[] {
  return history.map((message, index) => {
    if (index !== history.length - 1 || typeof message.content === 'string') return message;
    const blocks = message.content.map((block, blockIndex) =>
      blockIndex === message.content.length - 1 ? { ...block, cache_control: ephemeral } : block,
    ) as Anthropic.ContentBlockParam[];
    return { ...message, content: blocks } as Anthropic.MessageParam;
  });
}

function userText(text: string): Anthropic.MessageParam {
  return { role: 'user', content: [{ type: 'text', text }] };
}

/** 'Hi' under the long system prompt, which carries the cache breakpoint `cacheControl`. */
function hiUnderLongSystem(
  cacheControl: Anthropic.CacheControlEphemeral,
): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model,
    max_tokens: 64,
    system: [{ type: 'text', text: longSystem, cache_control: cacheControl }],
    messages: [userText('Hi')],
  };
}

async function runConversation(
  client: Anthropic,
  steps: number,
  history: Anthropic.MessageParam[],
) {
  const usages: Usage[] = [];
  for (let step = 0; step < steps; step += 1) {
    history.push(userText(`Step ${step}: tell me one more thing. [[sim: words 30]]`));
    const reply = await client.messages.create({
      model,
      max_tokens: 512,
      system: [{ type: 'text', text: longSystem, cache_control: ephemeral }],
      messages: withRollingBreakpoint(history),
    });
    usages.push(reply.usage);
    history.push({ role: 'assistant', content: reply.content });
  }
  return usages;
}

describe('prompt caching', () => {
  it('grows the cached prefix step by step over a 20-step conversation with a rolling breakpoint', async () => {
    const client = await start();
    const usages = await runConversation(client, 20, []);

    expect(usages[0]).toMatchObject({ cache_read_input_tokens: 0, input_tokens: 0 });
    expect(usages[0]?.cache_creation_input_tokens).toBe(totalInput(usages[0] as Usage));
    for (let step = 1; step < usages.length; step += 1) {
      const previous = usages[step - 1] as Usage;
      const current = usages[step] as Usage;
      // Everything the previous step sent is read back; only the new step is written.
      expect(current.cache_read_input_tokens).toBe(totalInput(previous));
      expect(current.cache_read_input_tokens).toBeGreaterThan(
        previous.cache_read_input_tokens ?? 0,
      );
      expect(current.cache_creation_input_tokens).toBe(totalInput(current) - totalInput(previous));
      expect(current.input_tokens).toBe(0);
    }
  });

  it('misses from a changed byte on, reading only the prefix before it', async () => {
    const client = await start();
    const history: Anthropic.MessageParam[] = [];
    const usages = await runConversation(client, 5, history);
    expect(usages.at(-1)?.cache_read_input_tokens).toBeGreaterThan(systemTokens);

    const first = history[0] as { content: { type: 'text'; text: string }[] };
    const original = first.content[0]?.text ?? '';
    first.content = [{ type: 'text', text: original.replace('Step 0', 'Step O') }];
    history.push(userText('And now? [[sim: words 5]]'));
    const changed = await client.messages.create({
      model,
      max_tokens: 512,
      system: [{ type: 'text', text: longSystem, cache_control: ephemeral }],
      messages: withRollingBreakpoint(history),
    });
    expect(changed.usage.cache_read_input_tokens).toBe(systemTokens);
    expect(changed.usage.cache_creation_input_tokens).toBe(
      totalInput(changed.usage) - systemTokens,
    );
  });

  it('caches nothing below the minimum cacheable length', async () => {
    const client = await start();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const reply = await client.messages.create({
        model,
        max_tokens: 128,
        system: [{ type: 'text', text: 'Short system prompt.', cache_control: ephemeral }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Hello', cache_control: ephemeral }] },
        ],
      });
      expect(reply.usage).toMatchObject({
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      });
      expect(reply.usage.input_tokens).toBeGreaterThan(0);
    }
  });

  it('expires an entry 5 minutes after its last hit, refreshing the TTL on each hit', async () => {
    const clock = createManualClock();
    const client = await start(clock);
    const request = hiUnderLongSystem(ephemeral);
    expect((await client.messages.create(request)).usage.cache_creation_input_tokens).toBe(
      systemTokens,
    );
    clock.advance(4 * 60_000);
    expect((await client.messages.create(request)).usage.cache_read_input_tokens).toBe(
      systemTokens,
    );
    clock.advance(4 * 60_000);
    // 8 minutes after the write, but 4 after the refreshing hit.
    expect((await client.messages.create(request)).usage.cache_read_input_tokens).toBe(
      systemTokens,
    );
    clock.advance(5 * 60_000);
    const expired = await client.messages.create(request);
    expect(expired.usage).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: systemTokens,
    });
  });

  it('keeps a 1h entry for an hour and reports it as a 1h write', async () => {
    const clock = createManualClock();
    const client = await start(clock);
    const request = hiUnderLongSystem({ ...ephemeral, ttl: '1h' });
    const written = await client.messages.create(request);
    expect(written.usage.cache_creation).toMatchObject({
      ephemeral_1h_input_tokens: systemTokens,
      ephemeral_5m_input_tokens: 0,
    });
    clock.advance(50 * 60_000);
    expect((await client.messages.create(request)).usage.cache_read_input_tokens).toBe(
      systemTokens,
    );
  });

  it('looks back about 20 blocks for an earlier write, and no further', async () => {
    const client = await start();
    const longBlock = { type: 'text' as const, text: longSystem };
    const longTokens = estimateTokens(longBlock);
    const send = (label: string, blockCount: number) =>
      client.messages.create({
        model,
        max_tokens: 64,
        messages: [
          {
            role: 'user',
            content: [
              longBlock,
              ...Array.from({ length: blockCount }, (_, index) => ({
                type: 'text' as const,
                text: `${label} block ${index}`,
              })),
              { type: 'text', text: 'End.', cache_control: ephemeral },
            ],
          },
        ],
      });
    const written = await client.messages.create({
      model,
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ ...longBlock, cache_control: ephemeral }] }],
    });
    expect(written.usage.cache_creation_input_tokens).toBe(longTokens);
    // The breakpoint sits 19 blocks after the earlier write: the lookback still reaches it.
    const near = await send('Near', 18);
    expect(near.usage.cache_read_input_tokens).toBe(longTokens);
    // 26 blocks after it: out of reach, so the whole prefix is written again.
    const far = await send('Far', 25);
    expect(far.usage.cache_read_input_tokens).toBe(0);
    expect(far.usage.cache_creation_input_tokens).toBe(totalInput(far.usage));
  });

  it('invalidates everything when tools change and only the messages when tool_choice changes', async () => {
    const client = await start();
    const tool = (description: string) => ({
      name: 'lookup',
      description,
      input_schema: { type: 'object' as const, properties: {} },
    });
    const base = {
      model,
      max_tokens: 64,
      system: [{ type: 'text' as const, text: longSystem, cache_control: ephemeral }],
      messages: [
        {
          role: 'user' as const,
          content: [{ type: 'text' as const, text: longSystem, cache_control: ephemeral }],
        },
      ],
    };
    const first = await client.messages.create({ ...base, tools: [tool('Look up a word')] });
    const prefix = totalInput(first.usage);
    const toolsAndSystem = prefix - estimateTokens({ type: 'text', text: longSystem });
    const same = await client.messages.create({ ...base, tools: [tool('Look up a word')] });
    expect(same.usage.cache_read_input_tokens).toBe(prefix);

    const otherChoice = await client.messages.create({
      ...base,
      tools: [tool('Look up a word')],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    });
    expect(otherChoice.usage.cache_read_input_tokens).toBe(toolsAndSystem);

    const otherTools = await client.messages.create({ ...base, tools: [tool('Look up a term')] });
    expect(otherTools.usage.cache_read_input_tokens).toBe(0);
  });

  it('misses from a tool_use whose input keys changed order, as the real cache does', async () => {
    const client = await start();
    const conversation = (input: Record<string, unknown>): Anthropic.MessageParam[] => [
      {
        role: 'user',
        content: [{ text: longSystem, type: 'text', cache_control: ephemeral }],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input }],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'found it' },
          { type: 'text', text: 'Go on.', cache_control: ephemeral },
        ],
      },
    ];
    const send = (messages: Anthropic.MessageParam[]) =>
      client.messages.create({ model, max_tokens: 64, messages });
    const first = await send(conversation({ word: 'cache', language: 'en' }));
    const prefix = totalInput(first.usage);
    const firstUserTokens = estimateTokens({ type: 'text', text: longSystem });

    const same = await send(conversation({ word: 'cache', language: 'en' }));
    expect(same.usage.cache_read_input_tokens).toBe(prefix);
    // The fields of an ordinary block may come in any order: the same prompt is rendered.
    const reorderedFields = conversation({ word: 'cache', language: 'en' });
    reorderedFields[0] = {
      role: 'user',
      content: [{ cache_control: ephemeral, type: 'text', text: longSystem }],
    };
    expect((await send(reorderedFields)).usage.cache_read_input_tokens).toBe(prefix);

    // Tool input is rendered as sent, so the same arguments in another order are new bytes.
    const reorderedInput = await send(conversation({ language: 'en', word: 'cache' }));
    expect(reorderedInput.usage.cache_read_input_tokens).toBe(firstUserTokens);
  });
});

describe('createPromptCache', () => {
  it('sweeps expired entries that are never asked for again', () => {
    const clock = createManualClock();
    const cache = createPromptCache({ clock, minimumCacheableTokens: 1024, lookbackBlocks: 20 });
    const cached = listPromptBlocks({
      model,
      system: [{ type: 'text', text: longSystem, cache_control: ephemeral }],
      messages: [{ role: 'user', content: 'Hi' }],
    });
    cache.account(cached);
    expect(cache.size()).toBe(1);
    clock.advance(6 * 60_000);
    const uncached = listPromptBlocks({ model, messages: [{ role: 'user', content: 'Hi' }] });
    for (let count = 0; count < 256; count += 1) cache.account(uncached);
    expect(cache.size()).toBe(0);
  });
});
