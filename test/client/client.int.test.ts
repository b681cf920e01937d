import { ChunklogClient, ChunklogError } from '@chunklog/client';
import { readLog, waitFor } from '@chunklog/client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealGateway, startRealGateway } from '../support/real-gateway';

/** The rejection of `promise`, which must reject. */
async function failure(promise: Promise<unknown>): Promise<ChunklogError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(ChunklogError);
  return error as ChunklogError;
}

describe('ChunklogClient against a real gateway with API keys', () => {
  const apiKey = `ck_${crypto.randomUUID()}`;
  let gateway: RealGateway;
  let client: ChunklogClient;

  beforeAll(async () => {
    gateway = await startRealGateway({ apiKey });
    client = new ChunklogClient({ baseUrl: `${gateway.url}/`, apiKey });
  });
  afterAll(() => gateway.close());

  it('creates, reads, lists page by page, renames and deletes tabs', async () => {
    const created = [];
    for (const n of [1, 2, 3, 4, 5]) {
      created.push(await client.createTab({ title: `tab ${n}`, config: { maxSteps: 3 } }));
    }
    expect(created[0]).toMatchObject({ title: 'tab 1', config: { maxSteps: 3 }, lastSeq: 0 });
    expect(await client.getTab(created[2]?.id ?? '')).toEqual(created[2]);
    const first = await client.listTabs({ limit: 2 });
    expect(first.tabs).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();
    const all = [];
    for await (const tab of client.tabs({ pageSize: 2 })) all.push(tab.id);
    expect(all).toEqual(created.map((tab) => tab.id).reverse());
    const renamed = await client.renameTab(created[1]?.id ?? '', 'renamed');
    expect(renamed).toMatchObject({
      id: created[1]?.id,
      title: 'renamed',
      config: { maxSteps: 3 },
    });
    expect((await client.getTab(created[1]?.id ?? '')).title).toBe('renamed');
    await client.deleteTab(created[0]?.id ?? '');
    expect(await failure(client.getTab(created[0]?.id ?? ''))).toMatchObject({
      code: 'not_found',
      status: 404,
    });
  });

  it('searches page by page and opens a tab around a hit', async () => {
    const tab = await client.createTab({ title: 'search' });
    for (const text of ['an okapi at the zoo', 'okapi okapi okapi', 'no match here']) {
      await client.sendMessage(tab.id, { text, mode: 'enqueue' });
    }
    await waitFor('the messages in the log', async () => {
      const log = await readLog(client, tab.id);
      return log.filter((chunk) => chunk.role === 'user').length === 3;
    });
    const first = await client.search({ q: 'okapi', tabId: tab.id, role: 'user', limit: 1 });
    expect(first.hits).toHaveLength(1);
    expect(first.hits[0]?.snippet).toBe('<mark>okapi</mark> <mark>okapi</mark> <mark>okapi</mark>');
    const all = [];
    for await (const hit of client.searchAll({ q: 'okapi', role: 'user', pageSize: 1 })) {
      all.push(hit);
    }
    expect(all.map((hit) => hit.tabId)).toEqual([tab.id, tab.id]);
    const seq = all[1]?.seq ?? 0;
    const around = await client.chunks(tab.id, { around: seq, limit: 3 });
    expect(around.chunks.map((chunk) => chunk.seq)).toContain(seq);
    expect(typeof around.hasMoreAfter).toBe('boolean');
    expect(await failure(client.search({ q: '   ' }))).toMatchObject({
      code: 'invalid_input',
      status: 400,
    });
  });

  it('sends messages with an Idempotency-Key and a mode, cancels, and reads pages and context', async () => {
    const tab = await client.createTab({ title: 'messages' });
    const sent = await client.sendMessage(tab.id, {
      text: '[[sim: words 300]] [[sim: rate 100]] slow',
      idempotencyKey: 'first',
    });
    const retried = await client.sendMessage(tab.id, {
      text: '[[sim: words 300]] [[sim: rate 100]] slow',
      idempotencyKey: 'first',
    });
    expect(retried.chunkId).toBe(sent.chunkId);
    expect([sent.replayed, retried.replayed]).toEqual([false, true]);
    const reused = await failure(
      client.sendMessage(tab.id, { text: 'another text', idempotencyKey: 'first' }),
    );
    expect(reused).toMatchObject({ code: 'idempotency_key_reused', status: 422, retryable: false });
    await waitFor(
      'the turn to run',
      async () => (await client.getTab(tab.id)).status === 'running',
    );
    const refused = await failure(client.sendMessage(tab.id, { text: 'not now', mode: 'reject' }));
    expect(refused).toMatchObject({ code: 'conflict', status: 409 });
    await client.cancel(tab.id);
    await waitFor('the cancel', async () => (await client.getTab(tab.id)).status === 'idle');
    const log = await readLog(client, tab.id);
    expect(log.filter((chunk) => chunk.id === sent.chunkId)).toHaveLength(1);
    // Stopped: no complete 300-word answer was stored.
    const answers = log.filter((chunk) => chunk.role === 'assistant' && chunk.type === 'text');
    for (const answer of answers) {
      expect(answer.type === 'text' && answer.data.text.split(' ').length).toBeLessThan(300);
    }

    const tail = await client.chunks(tab.id, { limit: 1 });
    expect(tail.chunks.map((chunk) => chunk.seq)).toEqual([log.length]);
    expect(tail.hasMore).toBe(log.length > 1);
    const older = await client.chunks(tab.id, { before: log.length, limit: 500 });
    expect([...older.chunks, ...tail.chunks]).toEqual(log);
    const context = await client.context(tab.id);
    expect(context.source).toBe('worker');
    expect(context.request.messages[0]?.role).toBe('user');
    const ticket = await client.streamTicket(tab.id);
    expect(ticket.expiresAt).toBeGreaterThan(Date.now());
  });

  it('creates a tab once per Idempotency-Key', async () => {
    const first = await client.createTab({ title: 'keyed', idempotencyKey: 'tab-once' });
    const again = await client.createTab({ title: 'keyed', idempotencyKey: 'tab-once' });
    expect(again).toEqual(first);
    expect(
      await failure(client.createTab({ title: 'other', idempotencyKey: 'tab-once' })),
    ).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
  });

  it('compacts a tab with instructions, once per Idempotency-Key, and reads the block in context', async () => {
    const tab = await client.createTab({ title: 'compact' });
    for (const [index, text] of ['Rain? [[sim: words 20]]', 'Snow? [[sim: words 20]]'].entries()) {
      await client.sendMessage(tab.id, { text });
      await waitFor('the answer', async () => {
        const log = await readLog(client, tab.id);
        const answers = log.filter((chunk) => chunk.role === 'assistant' && chunk.type === 'text');
        return answers.length > index && (await client.getTab(tab.id)).status === 'idle';
      });
    }
    const input = { instructions: 'Keep the weather kinds only.', idempotencyKey: 'compact-1' };
    const accepted = await client.compact(tab.id, input);
    await waitFor(
      'the compaction',
      async () =>
        (await readLog(client, tab.id)).some((chunk) => chunk.id === accepted.chunkId) &&
        (await client.getTab(tab.id)).status === 'idle',
    );
    // A retry names the same compaction chunk, already stored: nothing more is compacted.
    expect((await client.compact(tab.id, input)).chunkId).toBe(accepted.chunkId);
    const context = await client.context(tab.id);
    expect(context.request.messages[0]?.content[0]?.type).toBe('compaction');
    expect(context.cacheMisses).toEqual([]);
    const refused = await failure(client.compact(tab.id, { instructions: ' ' }));
    expect(refused).toMatchObject({ code: 'invalid_input', status: 400 });
  });

  it('creates, lists, rotates and deletes webhook endpoints, and reads their deliveries', async () => {
    const created = await client.createWebhook({
      url: 'https://example.com/hook',
      eventTypes: ['turn.completed'],
    });
    expect(created.secret).toMatch(/^whsec_/);
    expect(await client.listWebhooks()).toEqual([created.endpoint]);
    const rotated = await client.rotateWebhookSecret(created.endpoint.id);
    expect(rotated.secret).not.toBe(created.secret);
    expect(await client.webhookDeliveries(created.endpoint.id, { limit: 5 })).toEqual([]);
    expect(
      await failure(client.createWebhook({ url: 'not a url', eventTypes: ['turn.completed'] })),
    ).toMatchObject({ code: 'invalid_input', status: 400 });
    await client.deleteWebhook(created.endpoint.id);
    expect(await client.listWebhooks()).toEqual([]);
    expect(await failure(client.deleteWebhook(created.endpoint.id))).toMatchObject({
      code: 'not_found',
      status: 404,
    });
  });

  it('reports the API error code and status of a refused request', async () => {
    const tab = await client.createTab();
    const invalid = await failure(client.sendMessage(tab.id, { text: '   ' }));
    expect(invalid).toMatchObject({ code: 'invalid_input', status: 400, retryable: false });
    expect(invalid.requestId).toMatch(/.+/);
    const stranger = new ChunklogClient({ baseUrl: gateway.url, apiKey: 'not a key' });
    expect(await failure(stranger.listTabs())).toMatchObject({ code: 'unauthorized', status: 401 });
    const nobody = new ChunklogClient({ baseUrl: 'http://127.0.0.1:9', apiKey });
    expect(await failure(nobody.listTabs())).toMatchObject({
      code: 'network',
      status: 0,
      retryable: true,
    });
  });
});
