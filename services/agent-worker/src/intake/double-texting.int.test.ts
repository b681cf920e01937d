import {
  type Chunk,
  cancelSubject,
  type LiveEvent,
  OpenBlockSnapshotSchema,
  snapshotSubject,
} from '@chunklog/chunk-core';
import { describe, expect, it } from 'vitest';
import { assertGapFree, type Harness, useHarnessWithWorker } from '../testing/harness';

const getHarness = useHarnessWithWorker();

/** Resolves with the first event of the tab that matches. */
function eventSeen(
  h: Harness,
  tabId: string,
  match: (event: LiveEvent) => boolean,
  timeoutMs = 10_000,
) {
  return new Promise<LiveEvent>((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      const found = h.events.get(tabId)?.find(match);
      if (found) resolve(found);
      else if (Date.now() - started > timeoutMs) reject(new Error('event not seen'));
      else setTimeout(poll, 10);
    };
    poll();
  });
}

const sealOf = (type: Chunk['type']) => (event: LiveEvent) =>
  event.event === 'chunk-seal' && event.data.chunk.type === type;

describe('double texting', () => {
  it('lands an interrupt after the running step’s tool results, and the next step sees it', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(tab.id, 'first-interrupt-case [[sim: tool sleep {"milliseconds":600}]]');
    await eventSeen(harness, tab.id, sealOf('tool_call'));
    const interruptId = await harness.send(
      tab.id,
      'also this [[sim: text "noted the interrupt"]]',
      'interrupt',
    );
    const log = await harness.awaitTurnEnd(tab.id, 'completed');
    assertGapFree(log);
    expect(log.map((chunk) => `${chunk.step}:${chunk.role}/${chunk.type}`)).toEqual([
      '0:user/text',
      '0:assistant/tool_call',
      '0:tool/tool_result',
      '0:user/text',
      '1:assistant/text',
    ]);
    expect(log[3]!.id).toBe(interruptId);
    expect(new Set(log.map((chunk) => chunk.turnId)).size).toBe(1);
    expect(log[4]!.type === 'text' && log[4]!.data.text).toBe('noted the interrupt');
    // The step after the interrupt sent one user message: the tool result first, the text after it.
    const last = harness.requestsMentioning('first-interrupt-case').at(-1)!.body as {
      messages: { role: string; content: { type: string; text?: string }[] }[];
    };
    const final = last.messages.at(-1)!;
    expect(final.role).toBe('user');
    expect(final.content.map((block) => block.type)).toEqual(['tool_result', 'text']);
    expect(final.content[1]!.text).toContain('also this');
  });

  it('runs an enqueued message as a second turn after the first', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(tab.id, 'first turn [[sim: tool sleep {"milliseconds":400}]]');
    await eventSeen(harness, tab.id, sealOf('tool_call'));
    const queuedId = await harness.send(tab.id, 'second turn [[sim: text "two"]]', 'enqueue');
    const done = await harness.turnsDone(tab.id, 2);
    expect(done.map((event) => event.event === 'turn-done' && event.data.reason)).toEqual([
      'completed',
      'completed',
    ]);

    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    const turns = [...new Set(log.map((chunk) => chunk.turnId))];
    expect(turns).toHaveLength(2);
    const second = log.filter((chunk) => chunk.turnId === turns[1]);
    expect(second[0]).toMatchObject({ id: queuedId, step: 0, role: 'user', type: 'text' });
    const reply = second.at(-1)!;
    expect(reply.type === 'text' && reply.data.text).toBe('two');
    // The first turn was over (turn-done) before the second started.
    const events = harness.events.get(tab.id)!;
    const firstDone = events.findIndex((event) => event.event === 'turn-done');
    const secondStart = events.findLastIndex((event) => event.event === 'turn-start');
    expect(secondStart).toBeGreaterThan(firstDone);
    expect(done[0]!.event === 'turn-done' && done[0]!.data.turnId).toBe(turns[0]);
  });

  it('refuses a reject-mode message while a turn runs, leaving a system notice', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(tab.id, 'busy [[sim: tool sleep {"milliseconds":400}]]');
    await eventSeen(harness, tab.id, sealOf('tool_call'));
    const rejectedId = await harness.send(tab.id, 'not now', 'reject');
    await harness.turnsDone(tab.id, 1);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const log = await harness.store.readAll(tab.id);
    assertGapFree(log);
    expect(log.some((chunk) => chunk.id === rejectedId)).toBe(false);
    expect(log.filter((chunk) => chunk.type === 'system').map((chunk) => chunk.data)).toEqual([
      { kind: 'message-rejected', text: 'A message was rejected: a turn was running.' },
    ]);
    expect(await harness.store.inboxList(tab.id)).toEqual([]);
    expect(harness.events.get(tab.id)!.filter((event) => event.event === 'turn-done')).toHaveLength(
      1,
    );
  });
});

describe('cancel and the open-block snapshot', () => {
  it('serves the open block, then cancel seals its text as interrupted and ends the turn', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(tab.id, 'long answer [[sim: words 400]] [[sim: rate 400]]');
    const open = await eventSeen(harness, tab.id, (event) => event.event === 'chunk-open');
    await eventSeen(harness, tab.id, (event) => event.event === 'chunk-delta');
    const snapshot = OpenBlockSnapshotSchema.parse(
      await harness.bus.request(snapshotSubject(tab.id), {}),
    );
    expect(snapshot.open).toMatchObject({
      id: open.event === 'chunk-open' ? open.data.id : '',
      type: 'text',
      lastSeq: 1,
    });
    expect(snapshot.open!.text.length).toBeGreaterThan(0);

    await harness.bus.publish(cancelSubject(tab.id), { tabId: tab.id });
    const log = await harness.awaitTurnEnd(tab.id, 'cancelled');
    assertGapFree(log);
    const partial = log.at(-1)!;
    expect(partial.type).toBe('text');
    expect(partial.type === 'text' && partial.data.interrupted).toBe(true);
    // What was sealed is what clients saw: the deltas published before the cancel, in full.
    const streamed = harness.events
      .get(tab.id)!
      .flatMap((event) =>
        event.event === 'chunk-delta' && event.data.id === partial.id ? [event.data.text] : [],
      )
      .join('');
    expect(partial.type === 'text' && partial.data.text).toBe(streamed);
    expect(partial.type === 'text' && partial.data.text.startsWith(snapshot.open!.text)).toBe(true);
  });

  it('answers a running tool call with an error on cancel, and the next turn still builds a valid request', async (context) => {
    const harness = getHarness(context);
    const tab = await harness.newTab();
    await harness.send(tab.id, 'slow tool [[sim: tool sleep {"milliseconds":20000}]]');
    await eventSeen(harness, tab.id, sealOf('tool_call'));
    await harness.bus.publish(cancelSubject(tab.id), { tabId: tab.id });
    const [done] = await harness.turnsDone(tab.id, 1, 5_000);
    expect(done?.event === 'turn-done' && done.data.reason).toBe('cancelled');
    const log = await harness.store.readAll(tab.id);
    expect(log.at(-1)).toMatchObject({ type: 'tool_result', data: { isError: true } });

    await harness.send(tab.id, 'after cancel [[sim: text "fine"]]');
    const dones = await harness.turnsDone(tab.id, 2);
    expect(dones[1]?.event === 'turn-done' && dones[1].data.reason).toBe('completed');
    expect(harness.requestsMentioning('after cancel').map((request) => request.status)).toEqual([
      200,
    ]);
    assertGapFree(await harness.store.readAll(tab.id));
  });
});
