import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { createSimulator } from './create-simulator';
import { useSimulatorClient } from './testing/simulator-client';

const model = 'claude-sonnet-4-6';
const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

const logLines: string[] = [];
const sim = useSimulatorClient({ logger: (line) => logLines.push(line) }, { maxRetries: 2 });

/**
 * A tool turn from `text` as an agent loop runs it, with the weather tool offered: each reply's
 * calls answered with `result(round)`, until a reply calls no tool or after `maxRounds` replies.
 */
async function toolLoop(text: string, maxRounds: number, result: (round: number) => string) {
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: text }];
  const replies: Anthropic.Message[] = [];
  for (let round = 0; round < maxRounds; round += 1) {
    const reply = await sim.client.messages.create({
      model,
      max_tokens: 512,
      tools: [weatherTool],
      messages,
    });
    replies.push(reply);
    messages.push({ role: 'assistant', content: reply.content });
    const uses = reply.content.filter((block) => block.type === 'tool_use');
    if (uses.length === 0) break;
    messages.push({
      role: 'user',
      content: uses.map((block) => ({
        type: 'tool_result' as const,
        tool_use_id: block.id,
        content: result(round),
      })),
    });
  }
  return { replies, messages };
}

/** Posts a raw request, for what the SDK hides (headers, framing, other versions). */
async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${sim.simulator.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'test',
      'anthropic-version': '2023-06-01',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

function parseSse(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.trim().length > 0)
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7) ?? '';
      const data = lines.find((line) => line.startsWith('data: '))?.slice(6) ?? '{}';
      return { event, data: JSON.parse(data) };
    });
}

describe('POST /v1/messages', () => {
  it('gives the same final message through messages.stream() and a non-streaming create', async () => {
    const params = {
      model,
      max_tokens: 4096,
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
      tools: [weatherTool],
      messages: [
        {
          role: 'user' as const,
          content:
            'Weather please [[sim: think "Paris it is."]] [[sim: tool get_weather {"city":"Paris"}]] [[sim: tool get_weather {"city":"Oslo"}]]',
        },
      ],
    };
    const created = await sim.client.messages.create(params);
    const streamed = await sim.client.messages.stream(params).finalMessage();
    const { parsed_output: _parsed, ...streamedMessage } = streamed as typeof streamed & {
      parsed_output?: unknown;
    };
    expect(streamedMessage).toEqual(created);
    expect(created.content.map((block) => block.type)).toEqual([
      'thinking',
      'tool_use',
      'tool_use',
    ]);
    expect(created.content[0]).toMatchObject({ type: 'thinking', thinking: 'Paris it is.' });
    expect(created.content.slice(1)).toMatchObject([
      { name: 'get_weather', input: { city: 'Paris' } },
      { name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect(created.stop_reason).toBe('tool_use');
  });

  it('frames the stream like the recorded streams, with request-id and event-stream headers', async () => {
    const response = await post('/v1/messages', {
      model,
      max_tokens: 4096,
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [weatherTool],
      messages: [
        {
          role: 'user',
          content:
            'Go [[sim: think "Need the weather."]] [[sim: tool get_weather {"city":"San Francisco, California"}]]',
        },
      ],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const events = parseSse(await response.text());
    for (const event of events) expect(event.event).toBe(event.data.type);
    const names = events.map((event) => event.event);
    expect(names[0]).toBe('message_start');
    expect(names.slice(1, 3)).toEqual(['content_block_start', 'ping']);
    expect(names.slice(-2)).toEqual(['message_delta', 'message_stop']);
    const start = events[0]?.data.message as Record<string, unknown>;
    expect(start).toMatchObject({ content: [], stop_reason: null, usage: { output_tokens: 1 } });

    const blockEvents = (index: number) =>
      events.filter((event) => event.data.index === index).map((event) => event.data);
    const thinking = blockEvents(0);
    expect(thinking[0]).toMatchObject({
      type: 'content_block_start',
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    expect(thinking.at(-2)).toMatchObject({ delta: { type: 'signature_delta' } });
    expect(thinking.at(-1)).toMatchObject({ type: 'content_block_stop' });
    const thinkingText = thinking
      .map((event) => (event.delta as { thinking?: string } | undefined)?.thinking ?? '')
      .join('');
    expect(thinkingText).toBe('Need the weather.');

    const tool = blockEvents(1);
    expect(tool[0]).toMatchObject({
      content_block: { type: 'tool_use', name: 'get_weather', input: {} },
    });
    expect(tool[1]).toMatchObject({ delta: { type: 'input_json_delta', partial_json: '' } });
    const json = tool
      .map((event) => (event.delta as { partial_json?: string } | undefined)?.partial_json ?? '')
      .join('');
    expect(tool.length).toBeGreaterThan(4);
    expect(JSON.parse(json)).toEqual({ city: 'San Francisco, California' });
    expect(events.at(-2)?.data).toMatchObject({
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: expect.any(Number), input_tokens: expect.any(Number) },
    });
  });

  it('accepts both anthropic-version values the SDK lines send and rejects others', async () => {
    const body = { model, max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] };
    for (const version of ['2023-06-01', '2026-10-21']) {
      const response = await post('/v1/messages', body, { 'anthropic-version': version });
      expect(response.status).toBe(200);
    }
    const unknown = await post('/v1/messages', body, { 'anthropic-version': '2020-01-01' });
    expect(unknown.status).toBe(400);
    const error = await unknown.json();
    expect(error).toMatchObject({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: expect.stringContaining('anthropic-version'),
      },
      request_id: unknown.headers.get('request-id'),
    });
  });

  it('answers GET /healthz for a container health check without recording it as a request', async () => {
    const recorded = sim.simulator.requests.length;
    const health = await fetch(`${sim.simulator.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect(sim.simulator.requests.length).toBe(recorded);
  });

  it('answers an unknown route with not_found_error and a missing key with authentication_error', async () => {
    const missing = await post('/v1/complete', {});
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { type: 'not_found_error' } });
    const unauthenticated = await post(
      '/v1/messages',
      { model, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] },
      { 'x-api-key': '' },
    );
    expect(unauthenticated.status).toBe(401);
    expect(await unauthenticated.json()).toMatchObject({
      error: { type: 'authentication_error' },
    });
  });

  it('gives a plausible short answer without directives', async () => {
    const message = await sim.client.messages.create({
      model,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'How are you today?' }],
    });
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content).toHaveLength(1);
    expect(message.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('How are you today?'),
    });
  });

  it('calls an offered tool the user names, then answers with its result', async () => {
    const question = { role: 'user' as const, content: 'Use get_weather for Lisbon' };
    const first = await sim.client.messages.create({
      model,
      max_tokens: 512,
      tools: [weatherTool],
      messages: [question],
    });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content[0];
    if (call?.type !== 'tool_use') throw new Error(`expected tool_use, got ${call?.type}`);
    expect(call.name).toBe('get_weather');
    expect(call.id).toMatch(/^toolu_[a-zA-Z0-9_-]+$/);
    expect(call.input).toEqual({ city: 'Use get_weather for Lisbon' });

    const second = await sim.client.messages.create({
      model,
      max_tokens: 512,
      tools: [weatherTool],
      messages: [
        question,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: call.id, content: '21°C and sunny' }],
        },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('21°C and sunny'),
    });
  });

  it('drives an N-step tool turn with [[sim: steps N]]', async () => {
    const { replies, messages } = await toolLoop(
      'Count up [[sim: steps 3]] [[sim: tool get_weather {"city":"Rome"}]]',
      6,
      (round) => `sunny ${round}`,
    );
    const stopReasons = replies.map((reply) => reply.stop_reason ?? 'null');
    expect(stopReasons).toEqual(['tool_use', 'tool_use', 'tool_use', 'end_turn']);
    const answer = messages.at(-1)?.content;
    expect(JSON.stringify(answer)).toContain('sunny 2');
    const toolIds = messages.flatMap((message) =>
      typeof message.content === 'string'
        ? []
        : message.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : [])),
    );
    expect(new Set(toolIds).size).toBe(3);
  });

  it('runs a steps-only turn on the first offered tool, repeating its call', async () => {
    const { replies, messages } = await toolLoop(
      'Keep going [[sim: steps 2]]',
      4,
      (round) => `result ${round}`,
    );
    const calls = replies.flatMap((reply) =>
      reply.content.flatMap((block) =>
        block.type === 'tool_use' ? [[block.name, block.input]] : [],
      ),
    );
    expect(calls).toEqual([
      ['get_weather', { city: 'Keep going' }],
      ['get_weather', { city: 'Keep going' }],
    ]);
    expect(JSON.stringify(messages.at(-1)?.content)).toContain('result 1');
  });

  it('takes directives from interrupt text that follows tool results', async () => {
    const first = await sim.client.messages.create({
      model,
      max_tokens: 512,
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Weather [[sim: tool get_weather {"city":"Kyiv"}]]' }],
    });
    const call = first.content[0];
    if (call?.type !== 'tool_use') throw new Error('expected a tool call');
    const reply = await sim.client.messages.create({
      model,
      max_tokens: 512,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather [[sim: tool get_weather {"city":"Kyiv"}]]' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: call.id, content: 'cold' },
            { type: 'text', text: 'Actually, stop. [[sim: text "Stopping now."]]' },
          ],
        },
      ],
    });
    expect(reply.content).toEqual([{ type: 'text', text: 'Stopping now.' }]);
  });

  it('thinks first with adaptive thinking and calls no tool when tool_choice is none', async () => {
    const reply = await sim.client.messages.create({
      model,
      max_tokens: 2048,
      thinking: { type: 'adaptive' },
      tool_choice: { type: 'none' },
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Use get_weather please' }],
    });
    expect(reply.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    const thinking = reply.content[0];
    if (thinking?.type !== 'thinking') throw new Error('expected thinking');
    expect(sim.simulator.signer.verify(thinking.thinking, thinking.signature)).toBe(true);
  });

  it('calls a tool at every step while tool_choice forces one, one at a time when asked', async () => {
    const opening = {
      role: 'user' as const,
      content: 'Go [[sim: tool get_weather {"city":"A"}]] [[sim: tool get_weather {"city":"B"}]]',
    };
    const forced = { type: 'any' as const, disable_parallel_tool_use: true };
    const first = await sim.client.messages.create({
      model,
      max_tokens: 512,
      tools: [weatherTool],
      tool_choice: forced,
      messages: [opening],
    });
    expect(first.content).toMatchObject([{ type: 'tool_use', input: { city: 'A' } }]);
    const call = first.content[0];
    if (call?.type !== 'tool_use') throw new Error('expected a tool call');
    const second = await sim.client.messages.create({
      model,
      max_tokens: 512,
      tools: [weatherTool],
      tool_choice: forced,
      messages: [
        opening,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'ok' }] },
      ],
    });
    expect(second.stop_reason).toBe('tool_use');
  });

  it('writes exactly N words, honours a stop directive and cuts at max_tokens', async () => {
    const words = await sim.client.messages.create({
      model,
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Talk [[sim: words 50]]' }],
    });
    const text = words.content[0]?.type === 'text' ? words.content[0].text : '';
    expect(text.split(/\s+/)).toHaveLength(50);

    const stopped = await sim.client.messages.create({
      model,
      max_tokens: 1024,
      stop_sequences: ['END'],
      messages: [{ role: 'user', content: 'Talk [[sim: stop stop_sequence]]' }],
    });
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });

    const cut = await sim.client.messages.create({
      model,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'Talk [[sim: words 200]]' }],
    });
    expect(cut.stop_reason).toBe('max_tokens');
    expect(cut.usage.output_tokens).toBe(10);
    const cutText = cut.content[0]?.type === 'text' ? cut.content[0].text : '';
    expect(Buffer.byteLength(cutText)).toBeLessThanOrEqual(40);
  });

  it('waits for a delay and paces streamed tokens at a rate', async () => {
    const delayStarted = performance.now();
    await sim.client.messages.create({
      model,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Slow [[sim: delay 300]]' }],
    });
    expect(performance.now() - delayStarted).toBeGreaterThanOrEqual(290);

    const rateStarted = performance.now();
    const streamed = await sim.client.messages
      .stream({
        model,
        max_tokens: 1024,
        messages: [{ role: 'user', content: 'Paced [[sim: words 40]] [[sim: rate 200]]' }],
      })
      .finalMessage();
    const elapsed = performance.now() - rateStarted;
    // Pacing covers the streamed text's tokens at 200 tokens per second.
    expect(elapsed).toBeGreaterThanOrEqual((streamed.usage.output_tokens / 200) * 1000 * 0.9);
  });

  it('rejects a malformed directive with invalid_request_error', async () => {
    const error = await sim.client.messages
      .create({
        model,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Oops [[sim: words many]]' }],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.APIError>).message).toContain('words');
  });

  it('logs each request in one line', async () => {
    logLines.length = 0;
    await sim.client.messages.create({
      model,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Log me' }],
    });
    expect(logLines).toHaveLength(1);
    expect(logLines[0]).toMatch(
      /^POST \/v1\/messages 200 model=claude-sonnet-4-6 stream=false in=\d+ read=0 write=0 out=\d+ ms=\d+$/,
    );
    const recorded = sim.simulator.requests.at(-1);
    expect(recorded).toMatchObject({ status: 200, path: '/v1/messages', stream: false });
    expect(recorded?.body).toMatchObject({ messages: [{ content: 'Log me' }] });
  });
});

describe('POST /v1/messages/count_tokens', () => {
  it('counts the same input tokens the message reports', async () => {
    const params = {
      model,
      system: 'You are terse.',
      tools: [weatherTool],
      messages: [{ role: 'user' as const, content: 'How many tokens is this?' }],
    };
    const counted = await sim.client.messages.countTokens(params);
    const message = await sim.client.messages.create({ ...params, max_tokens: 64 });
    expect(counted.input_tokens).toBeGreaterThan(10);
    expect(counted.input_tokens).toBe(
      message.usage.input_tokens +
        (message.usage.cache_read_input_tokens ?? 0) +
        (message.usage.cache_creation_input_tokens ?? 0),
    );
  });
});

describe('createSimulator', () => {
  it('keeps only the latest requests and closes idempotently', async () => {
    const small = await createSimulator({ logger: () => {}, requestHistoryLimit: 2 });
    const smallClient = new Anthropic({ baseURL: small.url, apiKey: 'test' });
    for (const text of ['one', 'two', 'three']) {
      await smallClient.messages.countTokens({
        model,
        messages: [{ role: 'user', content: text }],
      });
    }
    expect(small.requests.map((request) => JSON.stringify(request.body))).toEqual([
      expect.stringContaining('two'),
      expect.stringContaining('three'),
    ]);
    await Promise.all([small.close(), small.close()]);
    await small.close();
    await expect(fetch(`${small.url}/v1/messages`, { method: 'POST' })).rejects.toThrow();
  });

  it('keeps request bodies within a byte budget, always keeping the latest request', async () => {
    const budgeted = await createSimulator({ logger: () => {}, requestHistoryBytes: 10_000 });
    try {
      const budgetedClient = new Anthropic({ baseURL: budgeted.url, apiKey: 'test' });
      const send = (label: string, size: number) =>
        budgetedClient.messages.countTokens({
          model,
          messages: [{ role: 'user', content: `${label} ${'x'.repeat(size)}` }],
        });
      const labels = () =>
        budgeted.requests.map((request) => JSON.stringify(request.body).slice(0, 80));
      await send('first', 4_000);
      await send('second', 4_000);
      expect(labels()).toEqual([
        expect.stringContaining('first'),
        expect.stringContaining('second'),
      ]);
      // Three bodies of 4 kB exceed 10 kB: the oldest goes.
      await send('third', 4_000);
      expect(labels()).toEqual([
        expect.stringContaining('second'),
        expect.stringContaining('third'),
      ]);
      // A body larger than the whole budget is still kept, alone.
      await send('huge', 20_000);
      expect(labels()).toEqual([expect.stringContaining('huge')]);
    } finally {
      await budgeted.close();
    }
  });
});
