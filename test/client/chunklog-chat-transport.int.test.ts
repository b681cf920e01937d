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

  it('regenerates an answer and edits a message in forks, the chat going on in the fork', async () => {
    const tab = await client.createTab({ title: 'ai-sdk versions' });
    const forks: Array<{ chatId: string; tabId: string; reason: string }> = [];
    const transport = new ChunklogChatTransport({
      client,
      storage: pageStorage(),
      onFork: ({ chatId, tab: fork, reason }) => forks.push({ chatId, tabId: fork.id, reason }),
    });
    const question = userMessage('q1', 'Rain? [[sim: text "Wet."]]');
    await messageOf(await send(transport, tab.id, question));
    // useChat's regenerate(): the messages up to the user message, trigger regenerate-message.
    const regenerated = await messageOf(
      await transport.sendMessages({
        trigger: 'regenerate-message',
        chatId: tab.id,
        messageId: undefined,
        messages: [question],
        abortSignal: undefined,
      }),
    );
    expect(forks).toEqual([{ chatId: tab.id, tabId: expect.any(String), reason: 'regenerate' }]);
    const regeneratedTab = forks[0]?.tabId ?? '';
    expect(transport.tabOf(tab.id)).toBe(regeneratedTab);
    const inFork = await storedMessages(regeneratedTab);
    expect(inFork.map(textOf)).toEqual(['Rain? [[sim: text "Wet."]]', 'Wet.']);
    expect(regenerated).toEqual(inFork[1]);
    expect(regenerated?.id).not.toBe((await storedMessages(tab.id))[1]?.id);

    // useChat's sendMessage({ text, messageId }) edits the message (here the fork's copy of it,
    // a loaded message's id being its chunk id): a fork of the fork.
    const loaded = await transport.loadMessages(tab.id);
    expect(loaded).toEqual(inFork);
    const edited = userMessage(loaded[0]?.id ?? '', 'Snow? [[sim: text "Cold."]]');
    const editedAnswer = await messageOf(
      await transport.sendMessages({
        trigger: 'submit-message',
        chatId: tab.id,
        messageId: edited.id,
        messages: [edited],
        abortSignal: undefined,
      }),
    );
    expect(forks.map((fork) => fork.reason)).toEqual(['regenerate', 'edit']);
    const editedTab = transport.tabOf(tab.id);
    expect(editedTab).toBe(forks[1]?.tabId);
    expect(await client.getTab(editedTab)).toMatchObject({ forkOf: regeneratedTab, forkSeq: 0 });
    const afterEdit = await storedMessages(editedTab);
    expect(afterEdit.map(textOf)).toEqual(['Snow? [[sim: text "Cold."]]', 'Cold.']);
    expect(editedAnswer).toEqual(afterEdit[1]);
    // The next message goes to the fork; the tabs forked from keep their logs.
    await messageOf(
      await send(transport, tab.id, userMessage('q2', 'Why? [[sim: text "Winter."]]')),
    );
    expect((await storedMessages(editedTab)).map(textOf)).toEqual([
      'Snow? [[sim: text "Cold."]]',
      'Cold.',
      'Why? [[sim: text "Winter."]]',
      'Winter.',
    ]);
    expect((await storedMessages(tab.id)).map(textOf)).toEqual([
      'Rain? [[sim: text "Wet."]]',
      'Wet.',
    ]);
    expect((await storedMessages(regeneratedTab)).map(textOf)).toEqual(inFork.map(textOf));
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
