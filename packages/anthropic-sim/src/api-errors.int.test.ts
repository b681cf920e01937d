import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { useSimulatorClient } from './testing/simulator-client';

const model = 'claude-sonnet-4-6';
const sim = useSimulatorClient({}, { maxRetries: 2 });

const ask = (content: string) => ({
  model,
  max_tokens: 256,
  messages: [{ role: 'user' as const, content }],
});

/** The requests the simulator saw whose user text contains `marker`. */
function requestsWith(marker: string) {
  return sim.simulator.requests.filter((request) => JSON.stringify(request.body).includes(marker));
}

describe('injected errors', () => {
  it('lets the SDK retry a 429, honouring retry-after, and then succeeds', async () => {
    const started = performance.now();
    const message = await sim.client.messages.create(
      ask('First [[sim: error 429 retry-after=1 times=1]] [[sim: text "made it"]]'),
    );
    const elapsed = performance.now() - started;
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'made it' });
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    const seen = requestsWith('made it');
    expect(seen.map((request) => request.status)).toEqual([429, 200]);
    expect(seen[1]?.headers['x-stainless-retry-count']).toBe('1');
  });

  it('answers 429 with the real error body, retry-after and request-id', async () => {
    const response = await fetch(`${sim.simulator.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'test',
        'anthropic-version': '2026-10-21',
      },
      body: JSON.stringify(ask('Raw [[sim: error 429 retry-after=7]]')),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: expect.any(String) },
      request_id: response.headers.get('request-id'),
    });
  });

  it('lets the SDK retry 529 twice with its own backoff, then succeeds on the third attempt', async () => {
    const message = await sim.client.messages
      .stream(ask('Busy [[sim: error 529 times=2]] [[sim: text "finally"]]'))
      .finalMessage();
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'finally' });
    expect(requestsWith('finally').map((request) => request.status)).toEqual([529, 529, 200]);
  });

  it('surfaces a persistent 500 as the SDK error once retries run out', async () => {
    const error = await sim.client.messages
      .create(ask('Broken [[sim: error 500]]'), { maxRetries: 1 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe('api_error');
    expect(requestsWith('Broken').map((request) => request.status)).toEqual([500, 500]);
  });

  it('sends an error event mid-stream after N deltas, which the SDK throws and does not retry', async () => {
    const deltas: string[] = [];
    const stream = sim.client.messages.stream(
      ask('Flaky [[sim: words 40]] [[sim: stream-error overloaded_error after=3]]'),
    );
    stream.on('text', (delta) => deltas.push(delta));
    const error = await stream.finalMessage().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe('overloaded_error');
    expect(deltas).toHaveLength(3);
    expect(requestsWith('Flaky').map((request) => request.status)).toEqual([200]);
  });

  it('applies an error to the step it names, so a later step of a tool turn can fail', async () => {
    const tools = [{ name: 'clock', input_schema: { type: 'object' as const, properties: {} } }];
    const opening = {
      role: 'user' as const,
      content: 'Time? [[sim: tool clock {}]] [[sim: error 500 step=1]]',
    };
    const first = await sim.client.messages.create({
      model,
      max_tokens: 256,
      tools,
      messages: [opening],
    });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content[0];
    if (call?.type !== 'tool_use') throw new Error('expected a tool call');
    const error = await sim.client.messages
      .create(
        {
          model,
          max_tokens: 256,
          tools,
          messages: [
            opening,
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: call.id, content: 'noon' }],
            },
          ],
        },
        { maxRetries: 0 },
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
  });
});
