import { type Chunk, ChunklogClient, ChunklogError } from '@chunklog/client';
import { readLog, waitFor } from '@chunklog/client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealGateway, startRealGateway } from '../support/real-gateway';

/** A log as a fork shows it: the same chunks, each under the fork's tab id. */
function under(tabId: string, log: Chunk[]): Chunk[] {
  return log.map((chunk) => ({ ...chunk, tabId }));
}

/** The user and assistant texts of a log, in order, as `role: text`. */
function texts(log: Chunk[]): string[] {
  return log.flatMap((chunk) =>
    chunk.type === 'text' && (chunk.role === 'user' || chunk.role === 'assistant')
      ? [`${chunk.role}: ${chunk.data.text}`]
      : [],
  );
}

describe('ChunklogClient forks, edit and regenerate against a real gateway and worker', () => {
  const apiKey = `ck_${crypto.randomUUID()}`;
  let gateway: RealGateway;
  let client: ChunklogClient;

  /** Sends `text` and waits until the tab is idle with one more assistant text. */
  async function ask(tabId: string, text: string): Promise<void> {
    const before = texts(await readLog(client, tabId)).length;
    await client.sendMessage(tabId, { text });
    await waitFor('the answer', async () => await answered(tabId, before + 2));
  }

  async function answered(tabId: string, count: number): Promise<boolean> {
    const log = texts(await readLog(client, tabId));
    return log.length >= count && (await client.getTab(tabId)).status === 'idle';
  }

  beforeAll(async () => {
    gateway = await startRealGateway({ apiKey });
    client = new ChunklogClient({ baseUrl: gateway.url, apiKey });
  });
  afterAll(() => gateway.close());

  it('forks after a seq, edits and regenerates a message, and lists the versions', async () => {
    const tab = await client.createTab({ title: 'versions' });
    await ask(tab.id, 'First? [[sim: text "One."]]');
    await ask(tab.id, 'Second? [[sim: text "Two."]]');
    const parentLog = await readLog(client, tab.id);
    const secondQuestion = parentLog.find(
      (chunk) =>
        chunk.role === 'user' && chunk.type === 'text' && chunk.data.text.startsWith('Second'),
    );
    if (!secondQuestion) throw new Error('no second question in the log');

    // A plain fork after the first turn: the parent's chunks by reference, nothing of its own yet.
    const atSeq = secondQuestion.seq - 1;
    const forked = await client.fork(tab.id, { atSeq, title: 'after one', idempotencyKey: 'f1' });
    expect(forked).toMatchObject({ forkOf: tab.id, forkSeq: atSeq, title: 'after one' });
    expect(await client.fork(tab.id, { atSeq, title: 'after one', idempotencyKey: 'f1' })).toEqual(
      forked,
    );
    expect(await readLog(client, forked.id)).toEqual(under(forked.id, parentLog.slice(0, atSeq)));

    const edited = await client.edit(tab.id, {
      seq: secondQuestion.seq,
      text: 'Second, edited? [[sim: text "Two, again."]]',
    });
    expect(edited.tab).toMatchObject({ forkOf: tab.id, forkSeq: atSeq });
    await waitFor('the edited answer', async () => await answered(edited.tab.id, 4));
    const editedLog = await readLog(client, edited.tab.id);
    expect(editedLog.slice(0, atSeq)).toEqual(under(edited.tab.id, parentLog.slice(0, atSeq)));
    expect(editedLog.find((chunk) => chunk.seq === atSeq + 1)?.id).toBe(edited.chunkId);
    expect(texts(editedLog)).toEqual([
      'user: First? [[sim: text "One."]]',
      'assistant: One.',
      'user: Second, edited? [[sim: text "Two, again."]]',
      'assistant: Two, again.',
    ]);

    const again = await client.regenerate(tab.id, { seq: secondQuestion.seq });
    await waitFor('the regenerated answer', async () => await answered(again.tab.id, 4));
    const againLog = await readLog(client, again.tab.id);
    expect(texts(againLog)).toEqual(texts(parentLog));
    // The same question answered anew: chunks of its own after the fork point.
    const ownIds = againLog.filter((chunk) => chunk.seq > atSeq).map((chunk) => chunk.id);
    expect(ownIds[0]).toBe(again.chunkId);
    for (const id of ownIds) expect(parentLog.some((chunk) => chunk.id === id)).toBe(false);

    // The parent is untouched, and lists its versions newest first, a page at a time.
    expect(await readLog(client, tab.id)).toEqual(parentLog);
    const page = await client.forks(tab.id, { limit: 2 });
    expect(page.tabs.map((fork) => fork.id)).toEqual([again.tab.id, edited.tab.id]);
    expect(page.nextCursor).not.toBeNull();
    const rest = await client.forks(tab.id, { limit: 2, cursor: page.nextCursor ?? undefined });
    expect(rest).toEqual({ tabs: [expect.objectContaining({ id: forked.id })], nextCursor: null });
  });

  it('refuses a seq that is not a user message, and a fork point past the end', async () => {
    const tab = await client.createTab({ title: 'refusals' });
    await ask(tab.id, 'Hello? [[sim: text "Hi."]]');
    const answer = (await readLog(client, tab.id)).find((chunk) => chunk.role === 'assistant');
    const refusals = [
      () => client.regenerate(tab.id, { seq: answer?.seq ?? 0 }),
      () => client.edit(tab.id, { seq: answer?.seq ?? 0, text: 'x' }),
      () => client.fork(tab.id, { atSeq: 99 }),
    ];
    for (const refusal of refusals) {
      const error = await refusal().then(
        () => null,
        (rejection: unknown) => rejection,
      );
      expect(error).toBeInstanceOf(ChunklogError);
      expect(error).toMatchObject({ code: 'invalid_input', status: 400 });
    }
  });
});
