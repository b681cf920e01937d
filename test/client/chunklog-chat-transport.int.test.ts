/**
 * The transport against the real gateway and worker (on the simulator), its parts folded by the
 * AI SDK itself (`readUIMessageStream`): the message it builds equals the stored log's.
 */

import { type ChunklogClient, createClient } from '@chunklog/client';
import { ChunklogChatTransport, chunksToUIMessages } from '@chunklog/client/ai-sdk';
import { readLog, waitFor } from '@chunklog/client/testing';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../packages/client/src/ai-sdk/resume-points';
import { type RealGateway, startRealGateway } from '../support/real-gateway';

let gateway: RealGateway;
let client: ChunklogClient;

beforeAll(async () => {
  gateway = await startRealGateway();
  client = createClient({ baseUrl: gateway.url });
}, 60_000);
afterAll(async () => {
  await gateway?.close();
});

/** A page's sessionStorage: it outlives the page's transport, as across a reload. */
const pageStorage = memoryStorage;

function userMessage(id: string, text: string): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

const send = (transport: ChunklogChatTransport, chatId: string, message: UIMessage) =>
  transport.sendMessages({
    trigger: 'submit-message',
    chatId,
    messageId: undefined,
    messages: [message],
    abortSignal: undefined,
  });

/** The assistant message the SDK builds from a stream, read to its end. */
async function messageOf(stream: ReadableStream<UIMessageChunk>): Promise<UIMessage | undefined> {
  let message: UIMessage | undefined;
  for await (const update of readUIMessageStream({ stream, terminateOnError: true })) {
    message = update;
  }
  return message && structuredClone(message);
}

/** The stored log as useChat messages, once the tab is idle again. */
async function storedMessages(tabId: string): Promise<UIMessage[]> {
  await waitFor('the turn to end', async () => (await client.getTab(tabId)).status === 'idle');
  return chunksToUIMessages(await readLog(client, tabId));
}

function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? [])
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join('');
}

describe('ChunklogChatTransport', () => {
  it('streams the answer to a message as the message the log holds', async () => {
    const tab = await client.createTab({ title: 'ai-sdk' });
    const transport = new ChunklogChatTransport({ client, storage: pageStorage() });
    const streamed = await messageOf(
      await send(transport, tab.id, userMessage('m1', '[[sim: words 30]]')),
    );
    const stored = await storedMessages(tab.id);
    expect(stored.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(streamed).toEqual(stored[1]);
    expect(textOf(streamed).split(' ')).toHaveLength(30);
  });

  it('shows tool calls with their input and output, step by step', async () => {
    const tab = await client.createTab({ title: 'ai-sdk tools' });
    const transport = new ChunklogChatTransport({ client, storage: pageStorage() });
    const streamed = await messageOf(
      await send(
        transport,
        tab.id,
        userMessage('m1', '[[sim: tool calculator {"expression":"6*7"}]]'),
      ),
    );
    const stored = await storedMessages(tab.id);
    expect(streamed).toEqual(stored[1]);
    const tool = streamed?.parts.find((part) => part.type === 'dynamic-tool');
    expect(tool).toMatchObject({
      toolName: 'calculator',
      state: 'output-available',
      input: { expression: '6*7' },
      providerExecuted: true,
    });
    expect(streamed?.parts.filter((part) => part.type === 'step-start')).toHaveLength(2);
  });

  it('sends a message retried with the same id once, and streams its one answer', async () => {
    const tab = await client.createTab({ title: 'ai-sdk retry' });
    const storage = pageStorage();
    const transport = new ChunklogChatTransport({ client, storage });
    const first = await send(transport, tab.id, userMessage('same', '[[sim: words 5]]'));
    await first.cancel();
    const retried = await messageOf(
      await send(transport, tab.id, userMessage('same', '[[sim: words 5]]')),
    );
    const stored = await storedMessages(tab.id);
    expect(stored.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(retried).toEqual(stored[1]);
  });

  it('resumes after a reload mid-answer: the replayed message has each character once', async () => {
    const tab = await client.createTab({ title: 'ai-sdk resume' });
    const storage = pageStorage();
    const before = new ChunklogChatTransport({ client, storage });
    const stream = await send(
      before,
      tab.id,
      userMessage('m1', '[[sim: words 120]] [[sim: rate 80]]'),
    );
    const reader = stream.getReader();
    let seen = '';
    while (seen.split(' ').length < 20) {
      const { value } = await reader.read();
      if (value?.type === 'text-delta') seen += value.delta;
    }
    await reader.cancel(); // the page goes away mid-answer

    const after = new ChunklogChatTransport({ client, storage });
    const resumed = await after.reconnectToStream({ chatId: tab.id });
    expect(resumed).not.toBeNull();
    const message = await messageOf(resumed!);
    const stored = await storedMessages(tab.id);
    expect(message).toEqual(stored[1]);
    expect(textOf(message).startsWith(seen)).toBe(true);
    // The answer is over: nothing is left to resume.
    expect(await after.reconnectToStream({ chatId: tab.id })).toBeNull();
  });

  it('resumes a running answer from the log in a page that never sent it', async () => {
    const tab = await client.createTab({ title: 'ai-sdk other page' });
    await client.sendMessage(tab.id, { text: '[[sim: words 80]] [[sim: rate 80]]' });
    await waitFor('the answer to stream', async () => {
      const { status, lastSeq } = await client.getTab(tab.id);
      return status === 'running' && lastSeq >= 1;
    });
    const transport = new ChunklogChatTransport({ client, storage: pageStorage() });
    const loaded = await transport.loadMessages(tab.id);
    expect(loaded.map((message) => message.role)).toEqual(['user']);
    const resumed = await transport.reconnectToStream({ chatId: tab.id });
    const message = await messageOf(resumed!);
    expect(message).toEqual((await storedMessages(tab.id))[1]);
  });

  it('maps a call that waits for a person to the SDK approval parts, and the response to POST /approvals', async () => {
    const tab = await client.createTab({
      title: 'ai-sdk approvals',
      config: { approval: { tools: ['calculator'] } },
    });
    const transport = new ChunklogChatTransport({ client, storage: pageStorage() });
    const question = userMessage('m-approve', 'Add [[sim: tool calculator {"expression":"6*7"}]]');
    const paused = await messageOf(await send(transport, tab.id, question));
    const call = paused?.parts.find((part) => part.type === 'dynamic-tool');
    expect(call).toMatchObject({ state: 'approval-requested', input: { expression: '6*7' } });
    if (call?.type !== 'dynamic-tool' || call.state !== 'approval-requested') throw new Error();
    expect((await client.getTab(tab.id)).status).toBe('waiting');
    // The log gives the same message (a page loaded while the call waits).
    expect(chunksToUIMessages(await readLog(client, tab.id))[1]).toEqual(paused);

    // addToolApprovalResponse({ id, approved: true, options: { body: { approvalInputs } } }).
    const answered: UIMessage = {
      ...paused!,
      parts: paused!.parts.map((part) =>
        part === call
          ? {
              ...call,
              state: 'approval-responded',
              approval: { id: call.approval.id, approved: true },
            }
          : part,
      ),
    };
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: tab.id,
      messageId: answered.id,
      messages: [question, answered],
      abortSignal: undefined,
      body: { approvalInputs: { [call.toolCallId]: { expression: '2+3' } } },
    });
    let final: UIMessage | undefined;
    for await (const update of readUIMessageStream({
      message: structuredClone(answered),
      stream,
    })) {
      final = update;
    }
    const stored = await storedMessages(tab.id);
    const decision = (await readLog(client, tab.id)).find(
      (chunk) => chunk.type === 'approval_decision',
    );
    expect(decision?.data).toMatchObject({ decision: 'approve', input: { expression: '2+3' } });
    expect(final?.id).toBe(paused?.id);
    expect(final?.parts.find((part) => part.type === 'dynamic-tool')).toMatchObject({
      state: 'output-available',
      output: { value: 5 },
      approval: { id: call.approval.id, approved: true },
    });
    expect(structuredClone(final)).toEqual(stored[1]);
  });
});
