/**
 * Property test of the resume contract at the relay's core: whatever live events the bus loses,
 * duplicates or delivers late, and wherever a client joins, it receives every seq after its
 * resume point once and in order, and every block's characters once and in place.
 */
import { randomUUID } from 'node:crypto';
import type { Bus } from '@chunklog/bus';
import {
  type Chunk,
  emptyUsage,
  type LiveEvent,
  type OpenBlockSnapshot,
  type Tab,
} from '@chunklog/chunk-core';
import type { ChunkStore } from '@chunklog/store';
import fc from 'fast-check';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { OutgoingEvent, StreamSink } from './stream-sink';
import type { HubEvent, HubListener, TabEventHub } from './tab-event-hub';
import { TabStreamRelay } from './tab-stream-relay';

type Step = { kind: 'user' } | { kind: 'block'; deltas: string[] } | { kind: 'pause' };

interface Fate {
  /** Live event lost on the bus. */
  lost: boolean;
  /** Delivered twice. */
  duplicated: boolean;
  /** Give the relay time to run before the next event. */
  settle: boolean;
}

const silent = { warn() {}, info() {}, debug() {}, error() {} } as unknown as FastifyBaseLogger;
const settle = async () => {
  for (let index = 0; index < 5; index++) await new Promise((resolve) => setImmediate(resolve));
};

/** The world around one relay: a log, an open block, a hub listener, a recording sink. */
function createWorld(tabId: string) {
  const stored: Chunk[] = [];
  let open: { id: string; text: string; lastSeq: number } | null = null;
  let listener: HubListener | null = null;
  const received: OutgoingEvent[] = [];
  const turnId = randomUUID();
  const store = {
    async page(_tabId: string, options: { after?: number; limit: number }) {
      const after = stored.filter((chunk) => chunk.seq > (options.after ?? 0));
      return {
        chunks: structuredClone(after.slice(0, options.limit)),
        total: stored.length,
        hasMore: after.length > options.limit,
      };
    },
    async getTab(): Promise<Tab> {
      return {
        id: tabId,
        parentTabId: null,
        forkOf: null,
        forkSeq: null,
        title: '',
        config: {},
        status: 'running',
        activeTurnId: turnId,
        waiting: null,
        lastSeq: stored.length,
        usage: emptyUsage(),
        createdAt: 0,
        updatedAt: 0,
      };
    },
  } as unknown as ChunkStore;
  const bus = {
    async request(): Promise<OpenBlockSnapshot> {
      await new Promise((resolve) => setImmediate(resolve));
      return {
        open: open ? { ...open, turnId, step: 0, role: 'assistant', type: 'text' } : null,
      };
    },
  } as unknown as Bus;
  const hub = {
    async join(_tabId: string, joined: HubListener) {
      listener = joined;
      return () => {
        listener = null;
      };
    },
  } as unknown as TabEventHub;
  const sink: StreamSink = {
    begin() {},
    send: (event) => received.push(structuredClone({ ...event, sharedDataJson: undefined })),
    bufferedBytes: () => 0,
    heartbeat() {},
    end() {},
  };

  function deliver(live: LiveEvent, fate: Fate) {
    if (fate.lost || !listener) return;
    const event: HubEvent = { live, dataJson: () => JSON.stringify(live.data) };
    listener.event(event);
    if (fate.duplicated) listener.event(event);
  }

  function seal(id: string, text: string): Chunk {
    const chunk = {
      id,
      tabId,
      seq: stored.length + 1,
      turnId,
      step: 0,
      role: 'assistant',
      type: 'text',
      data: { text },
      createdAt: 0,
    } as Chunk;
    stored.push(chunk);
    return chunk;
  }

  return {
    stored,
    received,
    store,
    bus,
    hub,
    sink,
    storeAhead: () => listener?.storeAhead(stored.length),
    async play(step: Step, fates: () => Fate) {
      const go = async (live: LiveEvent) => {
        const fate = fates();
        deliver(live, fate);
        if (fate.settle) await settle();
      };
      switch (step.kind) {
        case 'user': {
          const chunk = seal(randomUUID(), 'user text');
          await go({ event: 'chunk-seal', data: { tabId, chunk } });
          return;
        }
        case 'block': {
          const id = randomUUID();
          open = { id, text: '', lastSeq: stored.length };
          await go({
            event: 'chunk-open',
            data: { tabId, id, turnId, step: 0, role: 'assistant', type: 'text' },
          });
          for (const text of step.deltas) {
            const offset = open.text.length;
            open.text += text;
            await go({ event: 'chunk-delta', data: { tabId, id, offset, text } });
          }
          const chunk = seal(id, open.text);
          open = null;
          await go({ event: 'chunk-seal', data: { tabId, chunk } });
          return;
        }
        case 'pause':
          await settle();
          return;
        default: {
          const exhaustive: never = step;
          throw new Error(`unknown step ${JSON.stringify(exhaustive)}`);
        }
      }
    },
  };
}

/** A relay of the world's tab, with limits no test reaches; `bus` overrides the world's. */
function relayOf(
  world: ReturnType<typeof createWorld>,
  tabId: string,
  after: number,
  bus: Bus = world.bus,
): TabStreamRelay {
  return new TabStreamRelay({
    tabId,
    after,
    store: world.store,
    bus,
    hub: world.hub,
    sink: world.sink,
    logger: silent,
    maxQueuedEvents: 10_000,
    maxBufferedBytes: 1_000_000,
    snapshotTimeoutMs: 100,
  });
}

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ kind: 'user' }),
  fc.record({
    kind: fc.constant('block' as const),
    deltas: fc.array(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
  }),
  fc.constant<Step>({ kind: 'pause' }),
);

/** About one event in six lost, one in ten duplicated. */
const fateArbitrary: fc.Arbitrary<Fate> = fc.record({
  lost: fc.integer({ min: 0, max: 5 }).map((value) => value === 0),
  duplicated: fc.integer({ min: 0, max: 9 }).map((value) => value === 0),
  settle: fc.boolean(),
});

describe('TabStreamRelay', () => {
  it('delivers each seq after the resume point once, in order, and each block text once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArbitrary, { minLength: 1, maxLength: 12 }),
        fc.array(stepArbitrary, { minLength: 1, maxLength: 12 }),
        fc.infiniteStream(fateArbitrary),
        fc.nat(),
        async (before, during, fateStream, resumeSeed) => {
          const tabId = randomUUID();
          const world = createWorld(tabId);
          const fates = fateStream[Symbol.iterator]();
          const nextFate = () => fates.next().value as Fate;
          for (const step of before) await world.play(step, nextFate);
          const after = world.stored.length === 0 ? 0 : resumeSeed % (world.stored.length + 1);
          const relay = relayOf(world, tabId, after);
          // Started without waiting: the script keeps running while it catches up.
          const started = relay.start();
          for (const step of during) await world.play(step, nextFate);
          await started;
          // What the hub's reconcile does when trailing seals were lost.
          world.storeAhead();
          await settle();

          const seals = world.received.filter((event) => event.event === 'chunk-seal');
          expect(seals.map((event) => event.id)).toEqual(
            world.stored.slice(after).map((chunk) => chunk.seq),
          );
          expect(seals.map((event) => (event.data as { chunk: Chunk }).chunk)).toEqual(
            world.stored.slice(after),
          );
          // Exactly one stream-live, once the catch-up is over: its resume point is the last seq
          // delivered before it.
          const lives = world.received.flatMap((event, index) =>
            event.event === 'stream-live' ? [{ index, data: event.data }] : [],
          );
          expect(lives).toHaveLength(1);
          const sealedBeforeLive = world.received
            .slice(0, lives[0]!.index)
            .filter((event) => event.event === 'chunk-seal');
          expect(lives[0]!.data).toMatchObject({
            tabId,
            after: sealedBeforeLive.at(-1)?.id ?? after,
            status: 'running',
          });
          const texts = new Map<string, string>();
          const sealed = new Set<string>();
          for (const event of world.received) {
            const data = event.data as unknown as {
              id: string;
              offset: number;
              text: string;
              chunk: Chunk;
            };
            if (event.event === 'chunk-open') {
              expect(texts.has(data.id)).toBe(false);
              texts.set(data.id, '');
            } else if (event.event === 'chunk-delta') {
              expect(sealed.has(data.id)).toBe(false);
              expect(data.offset).toBe(texts.get(data.id)?.length);
              texts.set(data.id, texts.get(data.id) + data.text);
            } else if (event.event === 'chunk-seal') {
              sealed.add(data.chunk.id);
              const streamed = texts.get(data.chunk.id);
              // A block streamed here was streamed whole: its text is the sealed text.
              if (streamed !== undefined && !isPrefixOnly(streamed, data.chunk)) {
                expect(streamed).toBe((data.chunk.data as { text: string }).text);
              }
            }
          }
          relay.close();
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('TabStreamRelay when no worker answers snapshots', () => {
  it('asks once per unplaceable block, drops its later deltas, and delivers its text with the seal', async () => {
    const tabId = randomUUID();
    const world = createWorld(tabId);
    let snapshotRequests = 0;
    const silentBus = {
      async request(): Promise<never> {
        snapshotRequests += 1;
        throw new Error('no responders');
      },
    } as unknown as Bus;
    const relay = relayOf(world, tabId, 0, silentBus);
    await relay.start();
    const requestsAtStart = snapshotRequests;
    // The block's chunk-open is lost, so none of its eight deltas can be placed.
    let fate = 0;
    await world.play({ kind: 'block', deltas: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] }, () => ({
      lost: fate++ === 0,
      duplicated: false,
      settle: true,
    }));
    await settle();

    expect(snapshotRequests - requestsAtStart).toBe(1);
    expect(world.received.map((event) => event.event)).toEqual(['stream-live', 'chunk-seal']);
    const sealed = world.received[1]?.data as { chunk: Chunk };
    expect(sealed.chunk.data).toEqual({ text: 'abcdefgh' });
    relay.close();
  });
});

/**
 * Deltas lost at a block's end (after the last one received) cannot be recovered once the block
 * is sealed (no snapshot of a sealed block): the seal then carries the text. What was streamed
 * must still be an exact prefix, never a wrong or duplicated character.
 */
function isPrefixOnly(streamed: string, chunk: Chunk): boolean {
  const text = (chunk.data as { text: string }).text;
  expect(text.startsWith(streamed)).toBe(true);
  return streamed.length < text.length;
}

describe('TabStreamRelay around a takeover', () => {
  it('never opens a block twice: a block of the holder that lost the tab, beside the new holder’s, gets only its missing characters', async () => {
    const tabId = randomUUID();
    const world = createWorld(tabId);
    const turnId = randomUUID();
    const [stale, fresh] = [randomUUID(), randomUUID()];
    // Nothing open when the stream starts; later the worker that lost the tab (still streaming
    // its block) answers the snapshot request, further along than the stream.
    let snapshot: OpenBlockSnapshot = { open: null };
    const bus = {
      async request(): Promise<OpenBlockSnapshot> {
        return snapshot;
      },
    } as unknown as Bus;
    let listener: HubListener | null = null;
    const hub = {
      async join(_tabId: string, joined: HubListener) {
        listener = joined;
        return () => {};
      },
    } as unknown as TabEventHub;
    const relay = new TabStreamRelay({
      tabId,
      after: 0,
      store: world.store,
      bus,
      hub,
      sink: world.sink,
      logger: silent,
      maxQueuedEvents: 10_000,
      maxBufferedBytes: 1_000_000,
      snapshotTimeoutMs: 100,
    });
    await relay.start();
    snapshot = {
      open: {
        id: stale,
        text: 'hello world',
        lastSeq: 0,
        turnId,
        step: 0,
        role: 'assistant',
        type: 'text',
      },
    };
    const deliver = (live: LiveEvent) =>
      (listener as HubListener | null)?.event({ live, dataJson: () => JSON.stringify(live.data) });
    const opened = (id: string): LiveEvent => ({
      event: 'chunk-open',
      data: { tabId, id, turnId, step: 0, role: 'assistant', type: 'text' },
    });
    deliver(opened(stale));
    deliver({ event: 'chunk-delta', data: { tabId, id: stale, offset: 0, text: 'hello' } });
    deliver(opened(fresh));
    // The stale block's next delta arrives past a gap: the snapshot fills it.
    deliver({ event: 'chunk-delta', data: { tabId, id: stale, offset: 8, text: 'rld' } });
    await settle();

    expect(
      world.received.map((event) =>
        event.event === 'chunk-open' || event.event === 'chunk-delta'
          ? [event.event, event.data]
          : [event.event],
      ),
    ).toEqual([
      ['stream-live'],
      ['chunk-open', opened(stale).data],
      ['chunk-delta', { tabId, id: stale, offset: 0, text: 'hello' }],
      ['chunk-open', opened(fresh).data],
      ['chunk-delta', { tabId, id: stale, offset: 5, text: ' world' }],
    ]);
    relay.close();
  });
});
