/**
 * The contract suite of the ChunkStore port, run against every adapter (Postgres, PGlite) so
 * they cannot drift apart. Each test makes its own tenant and tabs, so one migrated store per
 * adapter serves the whole suite.
 */
import { randomUUID } from 'node:crypto';
import {
  buildMessages,
  type Chunk,
  ConflictError,
  InvalidInputError,
  isForkPoint,
  type NewChunk,
  NotFoundError,
  type Tab,
} from '@chunklog/chunk-core';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkStore } from '../chunk-store';
import { rejection } from './rejection';
import { describeSearchStoreContract } from './search-store-contract';
import { describeWebhookStoreContract } from './webhook-store-contract';

export interface ContractOptions {
  /**
   * Opens a fresh, empty store reporting to `metricsRegistry`; dispose() closes it and drops
   * whatever backs it.
   */
  open(options: {
    metricsRegistry: Registry;
  }): Promise<{ store: ChunkStore; dispose(): Promise<void> }>;
  /** Appends per appender and tab count of the many-tabs test (PGlite runs a lighter load). */
  scale: { appendsPerWriter: number; tabs: number; propertyRuns: number };
}

const zeroUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
};

/** A new user text chunk for `tabId` (a fresh id each call). */
export function textChunk(tabId: string, text = 'hello', turnId: string = randomUUID()): NewChunk {
  return { id: randomUUID(), tabId, turnId, step: 0, role: 'user', type: 'text', data: { text } };
}

function expectGapFree(seqs: number[]): void {
  const sorted = [...seqs].sort((left, right) => left - right);
  expect(sorted).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
}

/** How many times an observation in a prom-client histogram was above `bound` (and all of them). */
async function histogramCounts(registry: Registry, name: string, bound: number) {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) throw new Error(`no metric ${name}`);
  const { values } = (await metric.get()) as {
    values: Array<{ metricName?: string; labels: { le?: number | string }; value: number }>;
  };
  const count = values.find((entry) => entry.metricName === `${name}_count`)?.value ?? 0;
  const atOrBelow =
    values.find((entry) => entry.metricName === `${name}_bucket` && entry.labels.le === bound)
      ?.value ?? 0;
  return { count, above: count - atOrBelow };
}

export function describeChunkStoreContract(adapter: string, options: ContractOptions): void {
  describe(`ChunkStore contract on ${adapter}`, () => {
    let store: ChunkStore;
    let dispose: () => Promise<void>;
    const metricsRegistry = new Registry();

    beforeAll(async () => {
      ({ store, dispose } = await options.open({ metricsRegistry }));
      await store.migrate();
    });
    afterAll(async () => {
      await dispose?.();
    });

    describeWebhookStoreContract(() => store);
    describeSearchStoreContract(() => store);

    async function newTenant(): Promise<string> {
      return (await store.createTenant({ name: `tenant-${randomUUID()}` })).id;
    }

    let intakeSeq = 0;
    /** The next intake sequence: messages put in the order of these calls list in that order. */
    function nextIntakeSeq(): number {
      intakeSeq += 1;
      return intakeSeq;
    }

    /** The error of putting a fresh message to `tabId`, `fields` overriding its defaults. */
    function inboxPutError(
      tabId: string,
      fields: Partial<Parameters<ChunkStore['inboxPut']>[0]> = {},
    ): Promise<unknown> {
      return rejection(
        store.inboxPut({
          tabId,
          chunkId: randomUUID(),
          text: 'x',
          mode: 'enqueue',
          intakeSeq: nextIntakeSeq(),
          ...fields,
        }),
      );
    }

    async function newTab(tenantId?: string): Promise<Tab> {
      return store.createTab({ tenantId: tenantId ?? (await newTenant()), title: 'a tab' });
    }

    describe('migrate', () => {
      it('is a no-op when run again', async () => {
        await store.migrate();
        const tab = await newTab();
        expect(tab.lastSeq).toBe(0);
      });
    });

    describe('tabs', () => {
      it('creates a tab and reads it back with defaults', async () => {
        const tenantId = await newTenant();
        const created = await store.createTab({
          tenantId,
          title: 'first',
          config: { model: 'claude-x', maxSteps: 3 },
        });
        expect(created).toMatchObject({
          title: 'first',
          config: { model: 'claude-x', maxSteps: 3 },
          status: 'idle',
          activeTurnId: null,
          parentTabId: null,
          forkOf: null,
          forkSeq: null,
          lastSeq: 0,
          usage: zeroUsage,
        });
        expect(await store.getTab(created.id, { tenantId })).toEqual(created);
        expect(await store.tabTenant(created.id)).toBe(tenantId);
        expect(await store.tabTenantName(created.id)).toBe(await store.tenantName(tenantId));
      });

      it('refuses a NUL character in a title or config, and keeps a backslash-u0000 text', async () => {
        const tenantId = await newTenant();
        for (const input of [
          { tenantId, title: 'a\u0000b' },
          { tenantId, config: { system: 'be \u0000 brief' } },
        ]) {
          expect(await rejection(store.createTab(input))).toBeInstanceOf(InvalidInputError);
        }
        expect((await store.listTabs(tenantId, { limit: 10 })).tabs).toEqual([]);
        const kept = await store.createTab({ tenantId, title: 'say "\\u0000"' });
        expect((await store.getTab(kept.id)).title).toBe('say "\\u0000"');
      });

      it('hides a tab from another tenant as not found', async () => {
        const tab = await newTab();
        const other = await newTenant();
        expect(await rejection(store.getTab(tab.id, { tenantId: other }))).toBeInstanceOf(
          NotFoundError,
        );
        expect(await rejection(store.deleteTab(tab.id, { tenantId: other }))).toBeInstanceOf(
          NotFoundError,
        );
        expect((await store.listTabs(other, { limit: 10 })).tabs).toEqual([]);
        expect((await store.getTab(tab.id)).id).toBe(tab.id);
      });

      it('renames a tab of the tenant, and not one of another tenant or with a bad title', async () => {
        const tenantId = await newTenant();
        const tab = await newTab(tenantId);
        const renamed = await store.renameTab(tab.id, { title: 'renamed', tenantId });
        expect(renamed).toMatchObject({ id: tab.id, title: 'renamed', lastSeq: 0 });
        expect((await store.getTab(tab.id)).title).toBe('renamed');
        const other = await newTenant();
        expect(
          await rejection(store.renameTab(tab.id, { title: 'theirs', tenantId: other })),
        ).toBeInstanceOf(NotFoundError);
        expect(
          await rejection(store.renameTab(randomUUID(), { title: 'nobody', tenantId })),
        ).toBeInstanceOf(NotFoundError);
        expect(
          await rejection(store.renameTab(tab.id, { title: 'a\u0000b', tenantId })),
        ).toBeInstanceOf(InvalidInputError);
        expect((await store.getTab(tab.id)).title).toBe('renamed');
      });

      it('refuses a parent tab of another tenant and accepts one of the same tenant', async () => {
        const tenantId = await newTenant();
        const parent = await newTab(tenantId);
        const child = await store.createTab({ tenantId, parentTabId: parent.id });
        expect(child.parentTabId).toBe(parent.id);
        expect(
          await rejection(store.createTab({ tenantId: await newTenant(), parentTabId: parent.id })),
        ).toBeInstanceOf(NotFoundError);
      });

      it('refuses an unknown tenant and a bad config without writing', async () => {
        expect(
          await rejection(store.createTab({ tenantId: `nobody-${randomUUID()}` })),
        ).toBeInstanceOf(NotFoundError);
        const tenantId = await newTenant();
        expect(
          await rejection(
            store.createTab({
              tenantId,
              config: { maxSteps: 0 } as unknown as { maxSteps: number },
            }),
          ),
        ).toBeInstanceOf(InvalidInputError);
        expect((await store.listTabs(tenantId, { limit: 10 })).tabs).toEqual([]);
      });

      it('lists a tenant’s tabs newest first through an opaque cursor', async () => {
        const tenantId = await newTenant();
        const created: string[] = [];
        for (let index = 0; index < 5; index += 1) created.push((await newTab(tenantId)).id);
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.listTabs(tenantId, { limit: 2, cursor });
          seen.push(...page.tabs.map((tab) => tab.id));
          cursor = page.nextCursor ?? undefined;
          pages += 1;
        } while (cursor !== undefined);
        expect(seen).toEqual([...created].reverse());
        expect(pages).toBe(3);
        expect(
          await rejection(store.listTabs(tenantId, { limit: 2, cursor: 'garbage' })),
        ).toBeInstanceOf(InvalidInputError);
        expect(await rejection(store.listTabs(tenantId, { limit: 0 }))).toBeInstanceOf(
          InvalidInputError,
        );
      });

      it('counts a tenant’s tabs up to a bound', async () => {
        const tenantId = await newTenant();
        expect(await store.countTabs(tenantId, 10)).toBe(0);
        for (let index = 0; index < 3; index += 1) await newTab(tenantId);
        await newTab(await newTenant());
        expect(await store.countTabs(tenantId, 10)).toBe(3);
        expect(await store.countTabs(tenantId, 2)).toBe(2);
      });

      it('deletes a tab with its chunks and inbox', async () => {
        const tab = await newTab();
        await store.append(tab.id, [textChunk(tab.id)]);
        await store.inboxPut({
          tabId: tab.id,
          chunkId: randomUUID(),
          text: 'x',
          mode: 'enqueue',
          intakeSeq: nextIntakeSeq(),
        });
        await store.deleteTab(tab.id);
        expect(await rejection(store.getTab(tab.id))).toBeInstanceOf(NotFoundError);
        expect(await rejection(store.page(tab.id, { limit: 10 }))).toBeInstanceOf(NotFoundError);
        expect(await store.tabTenant(tab.id)).toBeNull();
        expect(await store.tabTenantName(tab.id)).toBeNull();
        expect(await rejection(store.deleteTab(tab.id))).toBeInstanceOf(NotFoundError);
      });

      it('answers not found for malformed and unknown tab ids', async () => {
        for (const tabId of ['not-a-uuid', randomUUID()]) {
          expect(await rejection(store.getTab(tabId))).toBeInstanceOf(NotFoundError);
          expect(await rejection(store.append(tabId, [textChunk(tabId)]))).toBeInstanceOf(
            NotFoundError,
          );
          expect(await rejection(store.clearTab(tabId))).toBeInstanceOf(NotFoundError);
          expect(await rejection(store.readAll(tabId))).toBeInstanceOf(NotFoundError);
          expect(await store.tabTenant(tabId)).toBeNull();
          expect(await store.tabTenantName(tabId)).toBeNull();
        }
      });
      it('creates a tab under a given id once, and hides that id from another tenant', async () => {
        const tenantId = await newTenant();
        const id = randomUUID();
        const created = await store.createTab({ tenantId, id, title: 'first' });
        expect(created.id).toBe(id);
        // A retry returns the tab as it stands, and creates no second one.
        await store.renameTab(id, { title: 'renamed' });
        expect(await store.createTab({ tenantId, id, title: 'second' })).toMatchObject({
          id,
          title: 'renamed',
        });
        expect((await store.listTabs(tenantId, { limit: 10 })).tabs).toHaveLength(1);
        const other = await newTenant();
        expect(await rejection(store.createTab({ tenantId: other, id }))).toBeInstanceOf(
          NotFoundError,
        );
      });
    });

    describe('idempotency keys', () => {
      it('claims a key once; later claims see the first hash, then its answer', async () => {
        const tenantId = await newTenant();
        const name = { tenantId, scope: 'POST /v1/tabs', key: `key-${randomUUID()}` };
        expect(await store.claimIdempotencyKey({ ...name, requestHash: 'a' })).toBeNull();
        expect(await store.claimIdempotencyKey({ ...name, requestHash: 'b' })).toEqual({
          requestHash: 'a',
          response: null,
        });
        await store.completeIdempotencyKey({ ...name, status: 201, body: { tab: { id: 'x' } } });
        expect(await store.claimIdempotencyKey({ ...name, requestHash: 'a' })).toEqual({
          requestHash: 'a',
          response: { status: 201, body: { tab: { id: 'x' } } },
        });
        // Keys are per tenant and per scope.
        const otherTenant = await newTenant();
        expect(
          await store.claimIdempotencyKey({ ...name, tenantId: otherTenant, requestHash: 'b' }),
        ).toBeNull();
        expect(
          await store.claimIdempotencyKey({ ...name, scope: 'elsewhere', requestHash: 'b' }),
        ).toBeNull();
      });

      it('gives one of many concurrent claims of a key the key', async () => {
        const tenantId = await newTenant();
        const name = { tenantId, scope: 'race', key: 'k' };
        const claims = await Promise.all(
          Array.from({ length: 8 }, (_, index) =>
            store.claimIdempotencyKey({ ...name, requestHash: `hash-${index}` }),
          ),
        );
        const winners = claims.filter((claim) => claim === null);
        expect(winners).toHaveLength(1);
        const winnerHash = `hash-${claims.indexOf(null)}`;
        for (const claim of claims) if (claim !== null) expect(claim.requestHash).toBe(winnerHash);
      });

      it("forgets a tab's keys with the tab", async () => {
        const tab = await newTab();
        const tenantId = (await store.tabTenant(tab.id))!;
        const name = { tenantId, scope: `POST /v1/tabs/${tab.id}/messages`, key: 'k' };
        await store.claimIdempotencyKey({ ...name, tabId: tab.id, requestHash: 'a' });
        await store.deleteTab(tab.id);
        expect(await store.claimIdempotencyKey({ ...name, requestHash: 'b' })).toBeNull();
      });
    });

    describe('append', () => {
      it('gives contiguous seqs from 1 to the chunks of one append, in order', async () => {
        const tab = await newTab();
        const chunks = [textChunk(tab.id, 'a'), textChunk(tab.id, 'b'), textChunk(tab.id, 'c')];
        const stored = await store.append(tab.id, chunks);
        expect(stored.map((chunk) => [chunk.id, chunk.seq])).toEqual(
          chunks.map((chunk, index) => [chunk.id, index + 1]),
        );
        expect(stored[0]).toMatchObject({ tabId: tab.id, role: 'user', data: { text: 'a' } });
        expect(Math.abs(stored[0]!.createdAt - Date.now())).toBeLessThan(60_000);
        const next = await store.append(tab.id, [textChunk(tab.id, 'd')]);
        expect(next[0]!.seq).toBe(4);
        expect((await store.getTab(tab.id)).lastSeq).toBe(4);
        expect(await store.readAll(tab.id)).toEqual([...stored, ...next]);
      });

      it('reads a tab from its latest compaction: the chunks above its cut, itself included', async () => {
        const tab = await newTab();
        await store.append(tab.id, [textChunk(tab.id, 'a'), textChunk(tab.id, 'b')]);
        // A tab without a compaction reads whole.
        expect(await store.readFromLatestCompaction(tab.id)).toEqual(await store.readAll(tab.id));
        const compaction = (throughSeq: number): NewChunk => ({
          ...textChunk(tab.id),
          role: 'assistant',
          type: 'compaction',
          data: {
            block: {
              type: 'compaction',
              content: `through ${throughSeq}`,
              encrypted_content: null,
            },
            throughSeq,
          },
        });
        await store.append(tab.id, [textChunk(tab.id, 'c'), compaction(2)]);
        await store.append(tab.id, [textChunk(tab.id, 'd'), textChunk(tab.id, 'e')]);
        // The latest compaction (seq 9) summarizes through seq 5; 6 to 8 were written meanwhile.
        await store.append(tab.id, [textChunk(tab.id, 'f'), textChunk(tab.id, 'g'), compaction(5)]);
        await store.append(tab.id, [textChunk(tab.id, 'h')]);
        const all = await store.readAll(tab.id);
        const tail = await store.readFromLatestCompaction(tab.id);
        expect(tail.map((chunk) => chunk.seq)).toEqual([6, 7, 8, 9, 10]);
        expect(tail).toEqual(all.slice(5));
        expect(tail[3]).toMatchObject({ type: 'compaction', data: { throughSeq: 5 } });
        expect(
          await rejection(store.readFromLatestCompaction('00000000-0000-4000-8000-000000000000')),
        ).toBeInstanceOf(NotFoundError);
        const empty = await newTab();
        expect(await store.readFromLatestCompaction(empty.id)).toEqual([]);
      });

      it('keeps 32 concurrent appenders on one tab gap-free and error-free', async () => {
        const tab = await newTab();
        const perWriter = 10;
        const told = new Map<string, number>();
        const results = await Promise.all(
          Array.from({ length: 32 }, async () => {
            const seqs: number[] = [];
            for (let index = 0; index < perWriter; index += 1) {
              const [chunk] = await store.append(tab.id, [textChunk(tab.id)]);
              seqs.push(chunk!.seq);
              told.set(chunk!.id, chunk!.seq);
            }
            return seqs;
          }),
        );
        // Each writer waits for its own appends, so its seqs must rise.
        for (const seqs of results) {
          expect(seqs).toEqual([...seqs].sort((left, right) => left - right));
        }
        const all = await store.readAll(tab.id);
        expect(all).toHaveLength(32 * perWriter);
        expectGapFree(all.map((chunk) => chunk.seq));
        expect(all.map((chunk) => chunk.seq)).toEqual(results.flat().sort((a, b) => a - b));
        expect(new Set(all.map((chunk) => chunk.id)).size).toBe(all.length);
        // Every seq told to a caller is the one stored for its chunk.
        expect(new Map(all.map((chunk) => [chunk.id, chunk.seq]))).toEqual(told);
        const page = await store.page(tab.id, { limit: 1 });
        expect(page.total).toBe(32 * perWriter);
      });

      it('keeps 32 concurrent appenders over many tabs gap-free per tab', async () => {
        const tenantId = await newTenant();
        const tabs: Tab[] = [];
        // Created in waves so a small pool is not flooded with a thousand waiting queries.
        for (let wave = 0; wave < options.scale.tabs; wave += 100) {
          const count = Math.min(100, options.scale.tabs - wave);
          tabs.push(...(await Promise.all(Array.from({ length: count }, () => newTab(tenantId)))));
        }
        const expectedCounts = new Map<string, number>();
        const told = new Map<string, number>();
        await Promise.all(
          Array.from({ length: 32 }, async (_, writer) => {
            for (let index = 0; index < options.scale.appendsPerWriter; index += 1) {
              // A spread that still lands several writers on the same tabs at once.
              const tab = tabs[(writer * 7919 + index * 104_729) % tabs.length]!;
              expectedCounts.set(tab.id, (expectedCounts.get(tab.id) ?? 0) + 1);
              const [chunk] = await store.append(tab.id, [textChunk(tab.id)]);
              told.set(chunk!.id, chunk!.seq);
            }
          }),
        );
        const stored = new Map<string, number>();
        for (let wave = 0; wave < tabs.length; wave += 50) {
          await Promise.all(
            tabs.slice(wave, wave + 50).map(async (tab) => {
              const all = await store.readAll(tab.id);
              expect(all).toHaveLength(expectedCounts.get(tab.id) ?? 0);
              expectGapFree(all.map((chunk) => chunk.seq));
              for (const chunk of all) stored.set(chunk.id, chunk.seq);
            }),
          );
        }
        expect(stored).toEqual(told);
      });

      it('allocates gap-free contiguous seqs for any mix of concurrent batch sizes', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 }), {
              minLength: 2,
              maxLength: 8,
            }),
            async (writers) => {
              const tab = await newTab();
              const batches = await Promise.all(
                writers.map(async (sizes) => {
                  const stored = [];
                  for (const size of sizes) {
                    const chunks = Array.from({ length: size }, () => textChunk(tab.id));
                    const result = await store.append(tab.id, chunks);
                    expect(result.map((chunk) => chunk.id)).toEqual(
                      chunks.map((chunk) => chunk.id),
                    );
                    stored.push(result.map((chunk) => chunk.seq));
                  }
                  return stored;
                }),
              );
              for (const seqs of batches.flat()) {
                expect(seqs).toEqual(seqs.map((_, index) => seqs[0]! + index));
              }
              const all = await store.readAll(tab.id);
              const total = writers.flat().reduce((sum, size) => sum + size, 0);
              expect(all).toHaveLength(total);
              expectGapFree(all.map((chunk) => chunk.seq));
              expect((await store.getTab(tab.id)).lastSeq).toBe(total);
            },
          ),
          { numRuns: options.scale.propertyRuns },
        );
      });

      it('refuses a stale expected seq and writes nothing (fencing)', async () => {
        const tab = await newTab();
        await store.append(tab.id, [textChunk(tab.id), textChunk(tab.id)], { expectedSeq: 1 });
        const stale = textChunk(tab.id);
        for (const expectedSeq of [1, 2, 4]) {
          expect(
            await rejection(store.append(tab.id, [stale, textChunk(tab.id)], { expectedSeq })),
          ).toBeInstanceOf(ConflictError);
        }
        // A single chunk (the store's fast path) is fenced the same way.
        for (const expectedSeq of [2, 4]) {
          expect(await rejection(store.append(tab.id, [stale], { expectedSeq }))).toBeInstanceOf(
            ConflictError,
          );
        }
        expect((await store.readAll(tab.id)).map((chunk) => chunk.seq)).toEqual([1, 2]);
        expect((await store.getTab(tab.id)).lastSeq).toBe(2);
        const [fresh] = await store.append(tab.id, [stale], { expectedSeq: 3 });
        expect(fresh!.seq).toBe(3);
      });

      it('stores a chunk id once and returns the same seq to every caller', async () => {
        const tab = await newTab();
        const chunk = textChunk(tab.id, 'once');
        const [first] = await store.append(tab.id, [chunk]);
        const [again] = await store.append(tab.id, [chunk]);
        expect(again).toEqual(first);

        const racing = textChunk(tab.id, 'racing');
        const results = await Promise.all(
          Array.from({ length: 8 }, () => store.append(tab.id, [racing])),
        );
        const seqs = new Set(results.map((result) => result[0]!.seq));
        expect(seqs.size).toBe(1);
        expect([...seqs][0]).toBe(2);

        // A replayed batch that adds one new chunk allocates only for the new one.
        const extra = textChunk(tab.id, 'extra');
        const mixed = await store.append(tab.id, [chunk, extra, racing]);
        expect(mixed.map((stored) => stored.seq)).toEqual([1, 3, 2]);
        // A full replay writes nothing, so a stale expected seq does not fence it.
        const replay = await store.append(tab.id, [chunk], { expectedSeq: 1 });
        expect(replay[0]!.seq).toBe(1);
        const all = await store.readAll(tab.id);
        expect(all.map((stored) => stored.id)).toEqual([chunk.id, racing.id, extra.id]);
        expect((await store.page(tab.id, { limit: 10 })).total).toBe(3);
      });

      describe('appends committed together (group commit)', () => {
        /**
         * Starts `fillers` appends to fresh tabs, then the given ones, all in the same tick: the
         * fillers take every free lane, so the given appends queue behind them and go together
         * in the next batch. Checks that a batch of at least `atLeast` appends did run.
         */
        async function inOneBatch<T extends unknown[]>(
          atLeast: number,
          appends: { [K in keyof T]: () => Promise<T[K]> },
        ): Promise<{ [K in keyof T]: PromiseSettledResult<T[K]> }> {
          const fillerTabs = await Promise.all(Array.from({ length: 4 }, () => newTab()));
          const before = await histogramCounts(
            metricsRegistry,
            'chunklog_store_append_batch_size',
            atLeast - 1,
          );
          const fillers = fillerTabs.map((tab) => store.append(tab.id, [textChunk(tab.id)]));
          const settled = await Promise.allSettled(appends.map((append) => append()));
          await Promise.all(fillers);
          const after = await histogramCounts(
            metricsRegistry,
            'chunklog_store_append_batch_size',
            atLeast - 1,
          );
          expect(after.above - before.above, 'batches of at least that many').toBeGreaterThan(0);
          return settled as { [K in keyof T]: PromiseSettledResult<T[K]> };
        }

        function value<T>(result: PromiseSettledResult<T>): T {
          if (result.status === 'rejected') throw result.reason;
          return result.value;
        }

        it('fails a fenced append alone; the others of its batch commit', async () => {
          const [a, b, c] = await Promise.all([newTab(), newTab(), newTab()]);
          for (const tab of [a!, b!, c!]) await store.append(tab.id, [textChunk(tab.id)]);
          const results = await inOneBatch(4, [
            () => store.append(a!.id, [textChunk(a!.id)], { expectedSeq: 2 }),
            () => store.append(b!.id, [textChunk(b!.id), textChunk(b!.id)], { expectedSeq: 1 }),
            () => store.append(c!.id, [textChunk(c!.id)]),
            () => store.append(a!.id, [textChunk(a!.id)], { expectedSeq: 3 }),
          ]);
          expect(value(results[0]).map((chunk) => chunk.seq)).toEqual([2]);
          expect(results[1].status === 'rejected' && results[1].reason).toBeInstanceOf(
            ConflictError,
          );
          expect(value(results[2]).map((chunk) => chunk.seq)).toEqual([2]);
          expect(value(results[3]).map((chunk) => chunk.seq)).toEqual([3]);
          expect((await store.readAll(b!.id)).map((chunk) => chunk.seq)).toEqual([1]);
          expect((await store.readAll(a!.id)).map((chunk) => chunk.seq)).toEqual([1, 2, 3]);
        });

        it('answers a replay among new appends with the stored chunk', async () => {
          const [a, b] = await Promise.all([newTab(), newTab()]);
          const stored = (await store.append(a!.id, [textChunk(a!.id, 'first')]))[0]!;
          const { seq: _seq, createdAt: _createdAt, ...replayed } = stored;
          const foreign = { ...replayed, tabId: b!.id };
          const results = await inOneBatch(4, [
            () => store.append(a!.id, [textChunk(a!.id, 'new')]),
            () => store.append(a!.id, [replayed]),
            () => store.append(b!.id, [textChunk(b!.id)]),
            () => store.append(b!.id, [foreign]),
            () => store.append(a!.id, [replayed, textChunk(a!.id, 'after')]),
          ]);
          expect(value(results[0]).map((chunk) => chunk.seq)).toEqual([2]);
          expect(value(results[1])).toEqual([stored]);
          expect(value(results[2]).map((chunk) => chunk.seq)).toEqual([1]);
          expect(results[3].status === 'rejected' && results[3].reason).toBeInstanceOf(
            ConflictError,
          );
          expect(value(results[4]).map((chunk) => chunk.seq)).toEqual([1, 3]);
          expect((await store.readAll(a!.id)).map((chunk) => chunk.seq)).toEqual([1, 2, 3]);
          expect((await store.readAll(b!.id)).map((chunk) => chunk.seq)).toEqual([1]);
        });

        it('gives two appends of one tab in one batch seqs in call order', async () => {
          const tab = await newTab();
          const first = [textChunk(tab.id, 'a'), textChunk(tab.id, 'b')];
          const second = [textChunk(tab.id, 'c')];
          const third = [textChunk(tab.id, 'd'), textChunk(tab.id, 'e')];
          const results = await inOneBatch(3, [
            () => store.append(tab.id, first, { expectedSeq: 1 }),
            () => store.append(tab.id, second, { expectedSeq: 3 }),
            () => store.append(tab.id, third),
          ]);
          expect(results.map((result) => value(result).map((chunk) => chunk.seq))).toEqual([
            [1, 2],
            [3],
            [4, 5],
          ]);
          expect(results.flatMap((result) => value(result).map((chunk) => chunk.id))).toEqual(
            [...first, ...second, ...third].map((chunk) => chunk.id),
          );
          expect((await store.readAll(tab.id)).map((chunk) => chunk.data)).toEqual(
            ['a', 'b', 'c', 'd', 'e'].map((text) => ({ text })),
          );
        });

        it('gives the same chunk appended twice in one batch one seq', async () => {
          const tab = await newTab();
          const chunk = textChunk(tab.id);
          const results = await inOneBatch(3, [
            () => store.append(tab.id, [chunk]),
            () => store.append(tab.id, [textChunk(tab.id)]),
            () => store.append(tab.id, [chunk]),
          ]);
          expect(value(results[0])).toEqual(value(results[2]));
          expect(value(results[0])[0]!.seq).toBe(1);
          expect(value(results[1])[0]!.seq).toBe(2);
        });

        it('fails the append of a tab deleted while it waits; the others commit', async () => {
          const [doomed, kept] = await Promise.all([newTab(), newTab()]);
          await store.append(doomed!.id, [textChunk(doomed!.id)]);
          const results = await inOneBatch(2, [
            () => store.append(kept!.id, [textChunk(kept!.id)]),
            () => store.append(doomed!.id, [textChunk(doomed!.id)]),
            () => store.deleteTab(doomed!.id),
            () => store.append(kept!.id, [textChunk(kept!.id)]),
          ]);
          expect(value(results[2])).toBeUndefined();
          // The delete may also land just after the batch: then the append succeeded, and its
          // chunk went with the tab. Either way nothing of the tab is left.
          if (results[1].status === 'rejected') {
            expect(results[1].reason).toBeInstanceOf(NotFoundError);
          }
          expect(await rejection(store.readAll(doomed!.id))).toBeInstanceOf(NotFoundError);
          expect(value(results[0])[0]!.seq).toBe(1);
          expect(value(results[3])[0]!.seq).toBe(2);
          expect((await store.readAll(kept!.id)).map((chunk) => chunk.seq)).toEqual([1, 2]);
        });

        it('reports batch sizes, batch durations and queue waits', async () => {
          const counts = () =>
            Promise.all(
              [
                'chunklog_store_append_queue_wait_seconds',
                'chunklog_store_append_batch_size',
                'chunklog_store_append_batch_duration_seconds',
              ].map(async (name) => (await histogramCounts(metricsRegistry, name, 0)).count),
            );
          const [waitsBefore, batchesBefore, durationsBefore] = await counts();
          const tab = await newTab();
          await Promise.all(
            Array.from({ length: 10 }, () => store.append(tab.id, [textChunk(tab.id)])),
          );
          const [waitsAfter, batchesAfter, durationsAfter] = await counts();
          expect(waitsAfter! - waitsBefore!).toBe(10);
          const batches = batchesAfter! - batchesBefore!;
          expect(batches).toBeGreaterThan(0);
          // Each batch's statement timed once, before any of its appends is answered.
          expect(durationsAfter! - durationsBefore!).toBe(batches);
          const exposition = await metricsRegistry.metrics();
          expect(exposition).toContain('chunklog_store_append_batch_size_bucket{le="64"}');
          expect(exposition).toContain(
            'chunklog_store_append_batch_duration_seconds_bucket{le="0.001"}',
          );
        });
      });

      it('refuses a chunk id already stored in another tab', async () => {
        const tab = await newTab();
        const other = await newTab();
        const chunk = textChunk(tab.id);
        await store.append(tab.id, [chunk]);
        expect(
          await rejection(store.append(other.id, [{ ...chunk, tabId: other.id }])),
        ).toBeInstanceOf(ConflictError);
        expect((await store.getTab(other.id)).lastSeq).toBe(0);
      });

      it('continues seq above the old tail after a clear', async () => {
        const tab = await newTab();
        await store.append(
          tab.id,
          Array.from({ length: 5 }, () => textChunk(tab.id)),
        );
        await store.clearTab(tab.id);
        const cleared = await store.page(tab.id, { limit: 10 });
        expect(cleared).toEqual({ chunks: [], total: 0, hasMore: false });
        expect((await store.getTab(tab.id)).lastSeq).toBe(5);
        const [next] = await store.append(tab.id, [textChunk(tab.id)]);
        expect(next!.seq).toBe(6);
        expect((await store.readAll(tab.id)).map((chunk) => chunk.seq)).toEqual([6]);
        expect((await store.page(tab.id, { limit: 10 })).total).toBe(1);
      });

      it('refuses bad input with a typed error and writes nothing', async () => {
        const tab = await newTab();
        const base = textChunk(tab.id);
        const bad: Array<[string, unknown[], unknown?]> = [
          ['oversized data', [{ ...base, data: { text: 'x'.repeat(1024 * 1024 + 1) } }]],
          ['negative step', [{ ...base, step: -1 }]],
          ['step as a string', [{ ...base, step: '1' }]],
          ['role that does not fit the type', [{ ...base, type: 'tool_call', role: 'user' }]],
          ['data of the wrong shape', [{ ...base, data: { text: 42 } }]],
          ['unknown type', [{ ...base, type: 'picture' }]],
          ['id that is not a uuid', [{ ...base, id: 'chunk-1' }]],
          ['chunk of another tab', [{ ...base, tabId: randomUUID() }]],
          ['same id twice', [base, base]],
          ['no chunks', []],
          ['NUL in text', [{ ...base, data: { text: 'a\u0000b' } }]],
          ['expected seq of zero', [base], { expectedSeq: 0 }],
          ['expected seq as a string', [base], { expectedSeq: '1' }],
          // A valid chunk next to an invalid one: the whole append is refused.
          ['one bad chunk in a batch', [textChunk(tab.id), { ...base, role: 'robot' }]],
        ];
        for (const [label, chunks, appendOptions] of bad) {
          const error = await rejection(
            store.append(tab.id, chunks as NewChunk[], appendOptions as { expectedSeq?: number }),
          );
          expect(error, label).toBeInstanceOf(InvalidInputError);
        }
        const unknownTab = randomUUID();
        expect(await rejection(store.append(unknownTab, [textChunk(unknownTab)]))).toBeInstanceOf(
          NotFoundError,
        );
        expect(await store.readAll(tab.id)).toEqual([]);
        expect((await store.getTab(tab.id)).lastSeq).toBe(0);
        expect((await store.append(tab.id, [base]))[0]!.seq).toBe(1);
      });
      it('stores a backslash followed by "u0000" as text, and refuses only the NUL character', async () => {
        const tab = await newTab();
        // A code sample, say: JSON-escaped it reads \\u0000, which a search of the JSON text
        // for \u0000 would mistake for a NUL.
        const sample = 'const nul = "\\u0000"; // and a tool call with {"k": "\\u0000"}';
        const [stored] = await store.append(tab.id, [textChunk(tab.id, sample)]);
        expect(stored!.data).toEqual({ text: sample });
        expect((await store.readAll(tab.id))[0]!.data).toEqual({ text: sample });
        const call: NewChunk = {
          id: randomUUID(),
          tabId: tab.id,
          turnId: randomUUID(),
          step: 0,
          role: 'assistant',
          type: 'tool_call',
          data: { callId: 'toolu_1', name: 'run', arguments: { code: sample } },
        };
        await store.append(tab.id, [call]);
        expect((await store.readAll(tab.id))[1]!.data).toEqual(call.data);
        // A NUL in a key of the arguments is refused like one in a value.
        const nulKey = {
          ...call,
          id: randomUUID(),
          data: { ...call.data, arguments: { 'k\u0000': 1 } },
        };
        expect(await rejection(store.append(tab.id, [nulKey]))).toBeInstanceOf(InvalidInputError);
        expect(await store.readAll(tab.id)).toHaveLength(2);
      });
    });

    describe('page', () => {
      it('pages backwards from the tail and forwards from a seq, in ascending order', async () => {
        const tab = await newTab();
        await store.append(
          tab.id,
          Array.from({ length: 10 }, (_, index) => textChunk(tab.id, `chunk ${index + 1}`)),
        );
        const seqsOf = (page: { chunks: Array<{ seq: number }> }) =>
          page.chunks.map((chunk) => chunk.seq);

        const tail = await store.page(tab.id, { limit: 3 });
        expect([seqsOf(tail), tail.hasMore, tail.total]).toEqual([[8, 9, 10], true, 10]);
        expect(tail.chunks[0]!.data).toEqual({ text: 'chunk 8' });
        const older = await store.page(tab.id, { limit: 3, before: 8 });
        expect([seqsOf(older), older.hasMore]).toEqual([[5, 6, 7], true]);
        const oldest = await store.page(tab.id, { limit: 3, before: 4 });
        expect([seqsOf(oldest), oldest.hasMore]).toEqual([[1, 2, 3], false]);
        const forwards = await store.page(tab.id, { limit: 3, after: 0 });
        expect([seqsOf(forwards), forwards.hasMore]).toEqual([[1, 2, 3], true]);
        const end = await store.page(tab.id, { limit: 5, after: 7 });
        expect([seqsOf(end), end.hasMore]).toEqual([[8, 9, 10], false]);
        const beyond = await store.page(tab.id, { limit: 5, after: 10 });
        expect([seqsOf(beyond), beyond.hasMore, beyond.total]).toEqual([[], false, 10]);
        const whole = await store.page(tab.id, { limit: 500 });
        expect(seqsOf(whole)).toEqual(Array.from({ length: 10 }, (_, index) => index + 1));
      });

      it('refuses bad paging options', async () => {
        const tab = await newTab();
        for (const bad of [
          { limit: 0 },
          { limit: 501 },
          { limit: 1.5 },
          { limit: 10, before: 0 },
          { limit: 10, after: -1 },
          { limit: 10, before: 5, after: 1 },
        ]) {
          expect(await rejection(store.page(tab.id, bad)), JSON.stringify(bad)).toBeInstanceOf(
            InvalidInputError,
          );
        }
        expect(await rejection(store.page(randomUUID(), { limit: 5 }))).toBeInstanceOf(
          NotFoundError,
        );
      });
    });

    describe('leases', () => {
      it('acquires, renews and releases a turn lease, adding usage', async () => {
        const tab = await newTab();
        const turnId = randomUUID();
        const acquired = await store.acquireLease(tab.id, {
          owner: 'worker-a',
          turnId,
          leaseMs: 30_000,
        });
        expect(acquired.acquired).toBe(true);
        expect(acquired.takenOver).toBeUndefined();
        expect(acquired.tab).toMatchObject({ status: 'running', activeTurnId: turnId });
        const lease = await store.getLease(tab.id);
        expect(lease).toMatchObject({ tabId: tab.id, turnId, owner: 'worker-a' });
        expect(Math.abs(lease!.expiresAt - (Date.now() + 30_000))).toBeLessThan(20_000);

        const refused = await store.acquireLease(tab.id, {
          owner: 'worker-b',
          turnId: randomUUID(),
          leaseMs: 30_000,
        });
        expect(refused.acquired).toBe(false);
        expect(refused.tab.activeTurnId).toBe(turnId);
        // The same owner asking again for the same turn (a redelivered command) keeps it.
        expect(
          (await store.acquireLease(tab.id, { owner: 'worker-a', turnId, leaseMs: 30_000 }))
            .acquired,
        ).toBe(true);

        expect(await store.renewLease(tab.id, { owner: 'worker-b', leaseMs: 60_000 })).toBe(false);
        expect(await store.renewLease(tab.id, { owner: 'worker-a', leaseMs: 60_000 })).toBe(true);
        expect((await store.getLease(tab.id))!.expiresAt).toBeGreaterThan(lease!.expiresAt);

        const usage = {
          inputTokens: 10,
          outputTokens: 20,
          cacheReadInputTokens: 30,
          cacheCreationInputTokens: 40,
        };
        expect(await store.releaseLease(tab.id, { owner: 'worker-b', usage })).toBe(false);
        expect(await store.releaseLease(tab.id, { owner: 'worker-a', usage })).toBe(true);
        expect(await store.releaseLease(tab.id, { owner: 'worker-a', usage })).toBe(false);
        const idle = await store.getTab(tab.id);
        expect(idle).toMatchObject({ status: 'idle', activeTurnId: null, usage });
        expect(await store.getLease(tab.id)).toBeNull();
        await store.acquireLease(tab.id, {
          owner: 'worker-b',
          turnId: randomUUID(),
          leaseMs: 1000,
        });
        await store.releaseLease(tab.id, { owner: 'worker-b', usage });
        expect((await store.getTab(tab.id)).usage.cacheCreationInputTokens).toBe(80);
      });

      it('lets another worker take over an expired lease and reports the old turn', async () => {
        const tab = await newTab();
        const turnId = randomUUID();
        await store.acquireLease(tab.id, { owner: 'worker-a', turnId, leaseMs: 1 });
        await new Promise((resolve) => setTimeout(resolve, 30));
        expect(await store.tabsNeedingWork(1000)).toContain(tab.id);
        const nextTurn = randomUUID();
        const taken = await store.acquireLease(tab.id, {
          owner: 'worker-b',
          turnId: nextTurn,
          leaseMs: 30_000,
        });
        expect(taken.acquired).toBe(true);
        expect(taken.takenOver).toEqual({ turnId, owner: 'worker-a' });
        expect(taken.tab.activeTurnId).toBe(nextTurn);
        expect(await store.renewLease(tab.id, { owner: 'worker-a', leaseMs: 30_000 })).toBe(false);
        expect(await store.releaseLease(tab.id, { owner: 'worker-a', usage: zeroUsage })).toBe(
          false,
        );
        expect(await store.tabsNeedingWork(1000)).not.toContain(tab.id);
      });

      it('refuses bad lease input and unknown tabs', async () => {
        const tab = await newTab();
        expect(
          await rejection(
            store.acquireLease(tab.id, { owner: '', turnId: randomUUID(), leaseMs: 1000 }),
          ),
        ).toBeInstanceOf(InvalidInputError);
        expect(
          await rejection(
            store.acquireLease(tab.id, { owner: 'w', turnId: 'turn', leaseMs: 1000 }),
          ),
        ).toBeInstanceOf(InvalidInputError);
        expect(
          await rejection(
            store.acquireLease(randomUUID(), { owner: 'w', turnId: randomUUID(), leaseMs: 1000 }),
          ),
        ).toBeInstanceOf(NotFoundError);
        expect((await store.getTab(tab.id)).status).toBe('idle');
      });
    });

    describe('inbox', () => {
      it('keeps accepted messages in order, once per chunk id, until removed', async () => {
        const tab = await newTab();
        const first = randomUUID();
        const second = randomUUID();
        expect(
          await store.inboxPut({
            tabId: tab.id,
            chunkId: first,
            text: 'one',
            mode: 'interrupt',
            intakeSeq: nextIntakeSeq(),
          }),
        ).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 3));
        expect(
          await store.inboxPut({
            tabId: tab.id,
            chunkId: second,
            text: 'two',
            mode: 'enqueue',
            intakeSeq: nextIntakeSeq(),
          }),
        ).toBe(true);
        expect(
          await store.inboxPut({
            tabId: tab.id,
            chunkId: first,
            text: 'one again',
            mode: 'enqueue',
            intakeSeq: nextIntakeSeq(),
          }),
        ).toBe(false);
        const listed = await store.inboxList(tab.id);
        expect(listed.map((message) => [message.chunkId, message.text, message.mode])).toEqual([
          [first, 'one', 'interrupt'],
          [second, 'two', 'enqueue'],
        ]);
        expect(listed[0]!.createdAt).toBeLessThanOrEqual(listed[1]!.createdAt);
        expect(await store.tabsNeedingWork(1000)).toContain(tab.id);

        await store.inboxRemove(tab.id, [first]);
        expect((await store.inboxList(tab.id)).map((message) => message.chunkId)).toEqual([second]);
        await store.inboxRemove(tab.id, [second]);
        expect(await store.inboxList(tab.id)).toEqual([]);
        expect(await store.tabsNeedingWork(1000)).not.toContain(tab.id);
      });

      it('orders messages by intake sequence, whatever order they were put in', async () => {
        const tab = await newTab();
        const bySeq = new Map([1, 2, 3, 4].map((seq) => [seq, randomUUID()] as const));
        // Workers store concurrently: the message accepted last can be the first one stored.
        for (const seq of [3, 1, 4, 2]) {
          const chunkId = bySeq.get(seq)!;
          await store.inboxPut({
            tabId: tab.id,
            chunkId,
            text: `m${seq}`,
            mode: 'enqueue',
            intakeSeq: 1_000_000_000_000 + seq,
          });
          await new Promise((resolve) => setTimeout(resolve, 3));
        }
        expect((await store.inboxList(tab.id)).map((message) => message.chunkId)).toEqual(
          [1, 2, 3, 4].map((seq) => bySeq.get(seq)),
        );
        expect(await inboxPutError(tab.id, { intakeSeq: -1 })).toBeInstanceOf(InvalidInputError);
      });

      it('refuses a chunk id that is already in the log', async () => {
        const tab = await newTab();
        const chunk = textChunk(tab.id);
        await store.append(tab.id, [chunk]);
        expect(
          await store.inboxPut({
            tabId: tab.id,
            chunkId: chunk.id,
            text: 'x',
            mode: 'interrupt',
            intakeSeq: nextIntakeSeq(),
          }),
        ).toBe(false);
        expect(await store.inboxList(tab.id)).toEqual([]);
      });

      it('does not list a running tab with waiting messages as needing work', async () => {
        const tab = await newTab();
        await store.acquireLease(tab.id, { owner: 'w', turnId: randomUUID(), leaseMs: 30_000 });
        await store.inboxPut({
          tabId: tab.id,
          chunkId: randomUUID(),
          text: 'x',
          mode: 'enqueue',
          intakeSeq: nextIntakeSeq(),
        });
        expect(await store.tabsNeedingWork(1000)).not.toContain(tab.id);
      });

      it('refuses bad messages and unknown tabs', async () => {
        const tab = await newTab();
        expect(await inboxPutError(tab.id, { mode: 'shout' as 'enqueue' })).toBeInstanceOf(
          InvalidInputError,
        );
        expect(
          await rejection(
            store.inboxPut({
              tabId: tab.id,
              chunkId: 'nope',
              text: 'x',
              mode: 'enqueue',
              intakeSeq: nextIntakeSeq(),
            }),
          ),
        ).toBeInstanceOf(InvalidInputError);
        expect(await inboxPutError(randomUUID())).toBeInstanceOf(NotFoundError);
        expect(await store.inboxList(tab.id)).toEqual([]);
      });
    });

    describe('forks', () => {
      /** Appends `count` user texts to `tabId` and returns the stored chunks. */
      async function fill(tabId: string, count: number, label: string): Promise<Chunk[]> {
        const stored: Chunk[] = [];
        for (let at = 0; at < count; at += 1) {
          stored.push(...(await store.append(tabId, [textChunk(tabId, `${label} ${at}`)])));
        }
        return stored;
      }
      const bodies = (chunks: readonly Chunk[]) =>
        chunks.map(({ seq, type, role, data }) => ({ seq, type, role, data }));

      it('shows the parent up to the fork point and its own chunks after, by every read, as a copy would', async () => {
        const tenantId = await newTenant();
        const parent = await newTab(tenantId);
        await fill(parent.id, 12, 'parent');
        const fork = await store.forkTab({ tenantId, parentTabId: parent.id, atSeq: 7 });
        expect(fork).toMatchObject({ forkOf: parent.id, forkSeq: 7, lastSeq: 7, status: 'idle' });
        // Its own chunks continue after the fork point; the parent goes on apart.
        const own = await fill(fork.id, 5, 'fork');
        expect(own.map((chunk) => chunk.seq)).toEqual([8, 9, 10, 11, 12]);
        await fill(parent.id, 3, 'parent later');
        const copy = await newTab(tenantId);
        const parentLog = await store.readAll(parent.id);
        for (const chunk of [...parentLog.slice(0, 7), ...own]) {
          await store.append(copy.id, [textChunk(copy.id, (chunk.data as { text: string }).text)]);
        }
        const forkLog = await store.readAll(fork.id);
        expect(forkLog.every((chunk) => chunk.tabId === fork.id)).toBe(true);
        expect(bodies(forkLog)).toEqual(bodies(await store.readAll(copy.id)));
        expect(forkLog.slice(0, 7).map((chunk) => chunk.id)).toEqual(
          parentLog.slice(0, 7).map((chunk) => chunk.id),
        );
        for (const options of [
          { limit: 4 },
          { limit: 500 },
          { after: 0, limit: 3 },
          { after: 5, limit: 4 },
          { after: 12, limit: 4 },
          { before: 9, limit: 3 },
          { before: 3, limit: 10 },
        ]) {
          const [mine, theirs] = await Promise.all([
            store.page(fork.id, options),
            store.page(copy.id, options),
          ]);
          expect({ ...mine, chunks: bodies(mine.chunks) }, JSON.stringify(options)).toEqual({
            ...theirs,
            chunks: bodies(theirs.chunks),
          });
        }
        expect((await store.getTab(fork.id)).lastSeq).toBe(12);
        expect(
          (await store.listForks(parent.id, { tenantId, limit: 10 })).tabs.map((tab) => tab.id),
        ).toEqual([fork.id]);
        // Another tenant can neither fork it nor list its forks.
        const stranger = await newTenant();
        expect(
          await rejection(store.forkTab({ tenantId: stranger, parentTabId: parent.id, atSeq: 1 })),
        ).toBeInstanceOf(NotFoundError);
        expect(
          await rejection(store.listForks(parent.id, { tenantId: stranger, limit: 10 })),
        ).toBeInstanceOf(NotFoundError);
        expect(
          await rejection(store.forkTab({ tenantId, parentTabId: parent.id, atSeq: 99 })),
        ).toBeInstanceOf(ConflictError);
      });

      it('for any log and any allowed fork point, reads and builds the request a copy would', async () => {
        const tenantId = await newTenant();
        /** A turn: a user message, then steps of text and answered tool calls, as a worker writes them. */
        const turnOf = (tabId: string, steps: number[], label: string): NewChunk[] => {
          const turnId = randomUUID();
          const chunks: NewChunk[] = [textChunk(tabId, `${label} asks`, turnId)];
          steps.forEach((calls, step) => {
            chunks.push({
              id: randomUUID(),
              tabId,
              turnId,
              step,
              role: 'assistant',
              type: 'text',
              data: { text: `${label} step ${step}` },
            });
            for (let call = 0; call < calls; call += 1) {
              const callId = `toolu_${label.replace(/\W/g, '')}_${step}_${call}`;
              chunks.push({
                id: randomUUID(),
                tabId,
                turnId,
                step,
                role: 'assistant',
                type: 'tool_call',
                data: { callId, name: 'calculator', arguments: { expression: `${step}+${call}` } },
              });
              chunks.push({
                id: randomUUID(),
                tabId,
                turnId,
                step,
                role: 'tool',
                type: 'tool_result',
                data: { callId, name: 'calculator', result: step + call, isError: false },
              });
            }
          });
          return chunks;
        };
        const bodies = (chunks: readonly Chunk[]) =>
          chunks.map(({ seq, turnId, step, type, role, data }) => ({
            seq,
            turnId,
            step,
            type,
            role,
            data,
          }));
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 3 }), {
              minLength: 1,
              maxLength: 4,
            }),
            fc.nat(),
            fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 2 }),
            async (turns, pick, ownSteps) => {
              const parent = await newTab(tenantId);
              for (const [at, steps] of turns.entries()) {
                await store.append(parent.id, turnOf(parent.id, steps, `p${at}`));
              }
              const log = await store.readAll(parent.id);
              const allowed = [0, ...log.map((chunk) => chunk.seq)].filter((seq) =>
                isForkPoint(log, seq),
              );
              const atSeq = allowed[pick % allowed.length]!;
              const fork = await store.forkTab({ tenantId, parentTabId: parent.id, atSeq });
              await store.append(fork.id, turnOf(fork.id, ownSteps, 'own'));
              const own = (await store.readAll(fork.id)).slice(atSeq);
              // The copy: the same chunks (their turns and call ids too) in a tab of its own.
              const copy = await newTab(tenantId);
              for (const chunk of [...log.slice(0, atSeq), ...own]) {
                const { seq: _seq, createdAt: _createdAt, ...body } = chunk;
                await store.append(copy.id, [{ ...body, id: randomUUID(), tabId: copy.id }]);
              }
              const [mine, theirs] = [await store.readAll(fork.id), await store.readAll(copy.id)];
              expect(bodies(mine)).toEqual(bodies(theirs));
              expect(JSON.stringify(buildMessages(mine))).toBe(
                JSON.stringify(buildMessages(theirs)),
              );
              expect(bodies(await store.readFromLatestCompaction(fork.id))).toEqual(bodies(theirs));
              const length = theirs.length;
              for (const options of [
                { limit: 3 },
                { after: pick % (length + 1), limit: 4 },
                { before: 1 + (pick % (length + 1)), limit: 5 },
              ]) {
                const [a, b] = [
                  await store.page(fork.id, options),
                  await store.page(copy.id, options),
                ];
                expect({ ...a, chunks: bodies(a.chunks) }).toEqual({
                  ...b,
                  chunks: bodies(b.chunks),
                });
              }
            },
          ),
          { numRuns: options.scale.propertyRuns },
        );
      });

      it('forks forks ten levels deep, each level reading its whole history', async () => {
        const tenantId = await newTenant();
        let tab = await newTab(tenantId);
        const expected: string[] = [];
        for (let level = 0; level <= 10; level += 1) {
          const added = await fill(tab.id, 3, `level ${level}`);
          // Each fork keeps all but the last chunk of its parent.
          expected.push(...added.slice(0, 2).map((chunk) => (chunk.data as { text: string }).text));
          if (level === 10) {
            expected.push((added[2]!.data as { text: string }).text);
            break;
          }
          const last = (await store.getTab(tab.id)).lastSeq;
          tab = await store.forkTab({ tenantId, parentTabId: tab.id, atSeq: last - 1 });
        }
        const log = await store.readAll(tab.id);
        expect(log.map((chunk) => chunk.seq)).toEqual(log.map((_, at) => at + 1));
        expect(log.map((chunk) => (chunk.data as { text: string }).text)).toEqual(expected);
        const page = await store.page(tab.id, { before: 12, limit: 5 });
        expect(page.chunks.map((chunk) => chunk.seq)).toEqual([7, 8, 9, 10, 11]);
        expect(page.total).toBe(log.length);
      });

      it("keeps a fork's history when its parent is deleted", async () => {
        const tenantId = await newTenant();
        const parent = await newTab(tenantId);
        await fill(parent.id, 6, 'parent');
        const fork = await store.forkTab({ tenantId, parentTabId: parent.id, atSeq: 4 });
        const child = await store.forkTab({ tenantId, parentTabId: fork.id, atSeq: 2 });
        await fill(fork.id, 2, 'fork');
        const before = await store.readAll(fork.id);
        await store.deleteTab(parent.id, { tenantId });
        expect(await rejection(store.getTab(parent.id))).toBeInstanceOf(NotFoundError);
        expect(await store.readAll(fork.id)).toEqual(before);
        expect((await store.getTab(fork.id)).forkOf).toBeNull();
        await store.deleteTab(fork.id, { tenantId });
        // The grandchild still shows what it refers to of both.
        expect(bodies(await store.readAll(child.id))).toEqual(bodies(before.slice(0, 2)));
      });

      it('takes concurrent appends to a parent and its fork, each gap-free and its own', async () => {
        const tenantId = await newTenant();
        const parent = await newTab(tenantId);
        await fill(parent.id, 3, 'base');
        const fork = await store.forkTab({ tenantId, parentTabId: parent.id, atSeq: 3 });
        await Promise.all(
          Array.from({ length: 20 }, (_, at) =>
            store.append(at % 2 === 0 ? parent.id : fork.id, [
              textChunk(at % 2 === 0 ? parent.id : fork.id, `racing ${at}`),
            ]),
          ),
        );
        for (const tab of [parent, fork]) {
          const log = await store.readAll(tab.id);
          expect(log.map((chunk) => chunk.seq)).toEqual(log.map((_, at) => at + 1));
          expect(log).toHaveLength(13);
        }
      });
    });

    describe('approvals', () => {
      const waitingFor = (turnId: string, expiresAt: number | null = null) => ({
        turnId,
        step: 0,
        cancelGeneration: 0,
        expiresAt,
        calls: [
          { callId: 'toolu_a', name: 'send_mail', arguments: { to: 'x' } },
          {
            callId: 'toolu_b',
            name: 'pay',
            arguments: { cents: 5 },
            inputSchema: { type: 'object' },
          },
        ],
      });
      const decision = (
        callId: string,
        turnId: string,
        verdict: 'approve' | 'deny' = 'approve',
      ) => ({
        callId,
        turnId,
        chunkId: randomUUID(),
        decision: verdict,
        decidedBy: 'key:abc',
      });

      it('records a paused turn only for the lease holder; the tab reads as waiting once let go', async () => {
        const tenantId = await newTenant();
        const tab = await newTab(tenantId);
        const turnId = randomUUID();
        expect(await store.getWaiting(tab.id)).toBeNull();
        expect(await store.setWaiting(tab.id, { owner: 'w', waiting: waitingFor(turnId) })).toBe(
          false,
        );
        await store.acquireLease(tab.id, { owner: 'w', turnId, leaseMs: 30_000 });
        expect(
          await store.setWaiting(tab.id, { owner: 'other', waiting: waitingFor(turnId) }),
        ).toBe(false);
        const expiresAt = Date.now() + 60_000;
        expect(
          await store.setWaiting(tab.id, { owner: 'w', waiting: waitingFor(turnId, expiresAt) }),
        ).toBe(true);
        expect((await store.getTab(tab.id)).status).toBe('running');
        await store.releaseLease(tab.id, {
          owner: 'w',
          usage: zeroUsage,
          ended: { turnId, reason: 'awaiting_approval' },
        });
        const paused = await store.getTab(tab.id, { tenantId });
        expect(paused).toMatchObject({ status: 'waiting', activeTurnId: null });
        // The tab's view names the calls, not the tools' schemas.
        expect(paused.waiting).toEqual({
          turnId,
          expiresAt,
          calls: [
            { callId: 'toolu_a', name: 'send_mail', arguments: { to: 'x' } },
            { callId: 'toolu_b', name: 'pay', arguments: { cents: 5 } },
          ],
        });
        expect((await store.getWaiting(tab.id, { tenantId }))?.calls[1]?.inputSchema).toEqual({
          type: 'object',
        });
        expect(
          await rejection(store.getWaiting(tab.id, { tenantId: await newTenant() })),
        ).toBeInstanceOf(NotFoundError);
        // Woken and resumed: the holder clears it.
        await store.acquireLease(tab.id, { owner: 'w2', turnId, leaseMs: 30_000 });
        expect(await store.setWaiting(tab.id, { owner: 'w2', waiting: null })).toBe(true);
        expect((await store.getTab(tab.id)).waiting).toBeNull();
      });

      it('records decisions all or none, refusing a second decision on a call with the first', async () => {
        const tab = await newTab();
        const turnId = randomUUID();
        expect(
          await store.recordDecisions(tab.id, [
            { ...decision('toolu_a', turnId), input: { to: 'y' } },
          ]),
        ).toEqual({ conflicts: [] });
        const refused = await store.recordDecisions(tab.id, [
          decision('toolu_b', turnId),
          decision('toolu_a', turnId, 'deny'),
        ]);
        expect(refused.conflicts).toEqual([
          expect.objectContaining({ callId: 'toolu_a', decision: 'approve', input: { to: 'y' } }),
        ]);
        // Nothing of the refused request was stored.
        const stored = await store.decisionsFor(tab.id, ['toolu_a', 'toolu_b']);
        expect(stored.map((record) => record.callId)).toEqual(['toolu_a']);
        expect(stored[0]).toMatchObject({ turnId, decidedBy: 'key:abc' });
        expect(Math.abs(stored[0]!.decidedAt - Date.now())).toBeLessThan(60_000);
        // Racing requests on one call: exactly one wins.
        const racing = await Promise.all(
          [1, 2, 3, 4].map(() =>
            store.recordDecisions(tab.id, [
              { ...decision('toolu_c', turnId, 'deny'), reason: 'no' },
            ]),
          ),
        );
        expect(racing.filter((outcome) => outcome.conflicts.length === 0)).toHaveLength(1);
        expect(
          await rejection(
            store.recordDecisions(tab.id, [
              { ...decision('toolu_d', turnId), input: { a: '\u0000' } },
            ]),
          ),
        ).toBeInstanceOf(InvalidInputError);
        expect(await store.decisionsFor(tab.id, [])).toEqual([]);
      });

      it('has the sweep wake a paused turn only for what wakes it, or once it expired', async () => {
        const tab = await newTab();
        const turnId = randomUUID();
        await store.acquireLease(tab.id, { owner: 'w', turnId, leaseMs: 30_000 });
        await store.setWaiting(tab.id, { owner: 'w', waiting: waitingFor(turnId) });
        await store.releaseLease(tab.id, { owner: 'w', usage: zeroUsage });
        await store.inboxPut({
          tabId: tab.id,
          chunkId: randomUUID(),
          text: 'later',
          mode: 'enqueue',
          intakeSeq: nextIntakeSeq(),
        });
        expect(await store.tabsNeedingWork(10_000)).not.toContain(tab.id);
        await store.inboxPut({
          tabId: tab.id,
          chunkId: randomUUID(),
          text: '',
          mode: 'approval',
          intakeSeq: nextIntakeSeq(),
        });
        expect(await store.tabsNeedingWork(10_000)).toContain(tab.id);

        const expiring = await newTab();
        await store.acquireLease(expiring.id, { owner: 'w', turnId, leaseMs: 30_000 });
        await store.setWaiting(expiring.id, {
          owner: 'w',
          waiting: waitingFor(turnId, Date.now() - 1_000),
        });
        await store.releaseLease(expiring.id, { owner: 'w', usage: zeroUsage });
        expect(await store.tabsNeedingWork(10_000)).toContain(expiring.id);
      });
    });

    describe('cancel generations', () => {
      it('counts cancels per tab, for its own tenant only', async () => {
        const tenantId = await newTenant();
        const tab = await newTab(tenantId);
        const other = await newTab(tenantId);
        expect(await store.cancelGeneration(tab.id)).toBe(0);
        expect(await store.requestCancel(tab.id, { tenantId })).toBe(1);
        expect(await store.requestCancel(tab.id)).toBe(2);
        expect(await store.cancelGeneration(tab.id, { tenantId })).toBe(2);
        expect(await store.cancelGeneration(other.id)).toBe(0);
        const stranger = await newTenant();
        expect(await rejection(store.requestCancel(tab.id, { tenantId: stranger }))).toBeInstanceOf(
          NotFoundError,
        );
        expect(
          await rejection(store.cancelGeneration(tab.id, { tenantId: stranger })),
        ).toBeInstanceOf(NotFoundError);
        expect(await rejection(store.requestCancel(randomUUID()))).toBeInstanceOf(NotFoundError);
        expect(await rejection(store.cancelGeneration('nope'))).toBeInstanceOf(NotFoundError);
        expect(await store.cancelGeneration(tab.id)).toBe(2);
      });

      it('keeps a message’s stamp, and stamps an unstamped one with the generation now', async () => {
        const tab = await newTab();
        const stamped = randomUUID();
        const unstamped = randomUUID();
        await store.inboxPut({
          tabId: tab.id,
          chunkId: stamped,
          text: 'before the cancel',
          mode: 'interrupt',
          intakeSeq: nextIntakeSeq(),
          cancelGeneration: 0,
        });
        await store.requestCancel(tab.id);
        await store.inboxPut({
          tabId: tab.id,
          chunkId: unstamped,
          text: 'x',
          mode: 'enqueue',
          intakeSeq: nextIntakeSeq(),
        });
        // Compared by id: two puts in the same clock tick list in chunk id order.
        const stamps = new Map(
          (await store.inboxList(tab.id)).map((message) => [
            message.chunkId,
            message.cancelGeneration,
          ]),
        );
        expect(stamps).toEqual(
          new Map([
            [stamped, 0],
            [unstamped, 1],
          ]),
        );
        expect(await inboxPutError(tab.id, { cancelGeneration: -1 })).toBeInstanceOf(
          InvalidInputError,
        );
      });

      it('records the turn’s generation for its holder only, through a takeover, until release', async () => {
        const tab = await newTab();
        const turnId = randomUUID();
        const input = { owner: 'worker-a', cancelGeneration: 3 };
        expect(await store.setTurnCancelGeneration(tab.id, input)).toBe(false);
        await store.acquireLease(tab.id, { owner: 'worker-a', turnId, leaseMs: 1 });
        expect((await store.getLease(tab.id))!.cancelGeneration).toBeNull();
        expect(
          await store.setTurnCancelGeneration(tab.id, { owner: 'worker-b', cancelGeneration: 5 }),
        ).toBe(false);
        expect(await store.setTurnCancelGeneration(tab.id, input)).toBe(true);
        expect(await store.getLease(tab.id)).toMatchObject({
          owner: 'worker-a',
          cancelGeneration: 3,
        });
        await new Promise((resolve) => setTimeout(resolve, 30));
        const taken = await store.acquireLease(tab.id, {
          owner: 'worker-b',
          turnId,
          leaseMs: 30_000,
        });
        expect(taken.takenOver).toEqual({ turnId, owner: 'worker-a' });
        expect(await store.getLease(tab.id)).toMatchObject({
          owner: 'worker-b',
          cancelGeneration: 3,
        });
        expect(await store.releaseLease(tab.id, { owner: 'worker-b', usage: zeroUsage })).toBe(
          true,
        );
        await store.acquireLease(tab.id, {
          owner: 'worker-b',
          turnId: randomUUID(),
          leaseMs: 30_000,
        });
        expect((await store.getLease(tab.id))!.cancelGeneration).toBeNull();
      });
    });

    describe('tenants and api keys', () => {
      it('authenticates a stored key to its tenant and nothing else', async () => {
        const tenant = await store.createTenant({ name: `acme-${randomUUID()}` });
        const key = `key-${randomUUID()}`;
        await store.addApiKey(tenant.id, key);
        await store.addApiKey(tenant.id, key);
        expect(await store.authenticate(key)).toBe(tenant.id);
        expect(await store.authenticate(`${key}x`)).toBeNull();
        expect(await store.authenticate('')).toBeNull();
        const other = await store.createTenant({ name: `other-${randomUUID()}` });
        expect(await rejection(store.addApiKey(other.id, key))).toBeInstanceOf(ConflictError);
        expect(await rejection(store.addApiKey(`nobody-${randomUUID()}`, 'k'))).toBeInstanceOf(
          NotFoundError,
        );
        expect(await store.authenticate(key)).toBe(tenant.id);
      });

      it('creates tenants idempotently, with a chosen id or a generated one', async () => {
        const name = `named-${randomUUID()}`;
        const id = `tenant-${randomUUID()}`;
        const created = await store.createTenant({ name, id });
        expect(created).toEqual({ id, name });
        expect(await store.createTenant({ name, id })).toEqual(created);
        expect(await store.createTenant({ name })).toEqual(created);
        expect(
          await rejection(store.createTenant({ name, id: `x-${randomUUID()}` })),
        ).toBeInstanceOf(ConflictError);
        const generated = await store.createTenant({ name: `gen-${randomUUID()}` });
        expect(generated.id).toMatch(/^[0-9a-f-]{36}$/);
      });

      it("reads a tenant's name by its id", async () => {
        const tenant = await store.createTenant({ name: `named-${randomUUID()}` });
        expect(await store.tenantName(tenant.id)).toBe(tenant.name);
        expect(await store.tenantName(`nobody-${randomUUID()}`)).toBeNull();
      });
    });
  });
}
