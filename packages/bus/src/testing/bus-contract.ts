/**
 * The one contract suite of the Bus port. Every adapter's test file calls it with its factory,
 * so the NATS adapter and the in-process bus cannot drift apart.
 */
import { randomUUID } from 'node:crypto';
import { InvalidInputError, NotFoundError } from '@chunklog/chunk-core';
import { sleep } from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus, Subscription, WorkItem } from '../bus';
import {
  BusUnavailableError,
  NoRespondersError,
  RemoteHandlerError,
  RequestTimeoutError,
} from '../bus-errors';
import { waitUntil } from './wait-until';

/** A unique, valid subject token or queue name, so tests sharing a bus never see each other. */
const unique = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

interface Received {
  subject: string;
  payload: unknown;
}

async function collect(bus: Bus, pattern: string) {
  const received: Received[] = [];
  const subscription = await bus.subscribe(pattern, (payload, subject) => {
    received.push({ subject, payload });
  });
  return { received, subscription };
}

/** How the contract suite reaches an adapter. */
export interface BusContractSetup {
  /** A new bus (on NATS: a new connection). */
  createBus(): Promise<Bus>;
  /**
   * A second party on the same broker as `bus`, the way a gateway and a worker are: on NATS
   * another connection, in process the same bus (processes cannot share an in-process bus).
   */
  createPeer(bus: Bus): Promise<Bus>;
}

export function busContract(adapterName: string, setup: BusContractSetup): void {
  const { createBus } = setup;
  describe(`Bus contract: ${adapterName}`, () => {
    let bus: Bus;
    let peer: Bus;
    const subscriptions: Subscription[] = [];
    const track = <T extends Subscription>(subscription: T): T => {
      subscriptions.push(subscription);
      return subscription;
    };

    beforeAll(async () => {
      bus = await createBus();
      peer = await setup.createPeer(bus);
    });
    afterAll(async () => {
      for (const subscription of subscriptions) await subscription.stop();
      await peer?.close();
      await bus?.close();
    });

    describe('publish and subscribe', () => {
      it('matches * to exactly one token and a final > to one or more', async () => {
        const tab = unique('tab');
        const single = await collect(bus, `chunklog.tab.*.evt.chunk-seal`);
        const tabEvents = await collect(bus, `chunklog.tab.${tab}.evt.*`);
        const everything = await collect(bus, `chunklog.tab.${tab}.>`);
        for (const { subscription } of [single, tabEvents, everything]) track(subscription);

        await peer.publish(`chunklog.tab.${tab}.evt.chunk-seal`, { n: 1 });
        await peer.publish(`chunklog.tab.${tab}.evt.chunk-open`, { n: 2 });
        await peer.publish(`chunklog.tab.${tab}.cmd.cancel`, { n: 3 });
        await peer.publish(`chunklog.tab.${tab}`, { n: 4 });
        await peer.publish(`chunklog.tab.${tab}.evt.chunk-seal.extra`, { n: 5 });
        // A sentinel every pattern matches: once it is in, everything before it is in too.
        await peer.publish(`chunklog.tab.${tab}.evt.chunk-seal`, { n: 'end' });
        for (const { received } of [single, tabEvents, everything]) {
          await waitUntil(
            () => received.some(({ payload }) => (payload as { n: unknown }).n === 'end'),
            'the sentinel arrives',
          );
        }
        const numbers = (received: Received[]) =>
          received
            .filter(({ subject }) => subject.includes(tab))
            .map(({ payload }) => (payload as { n: unknown }).n);
        expect(numbers(single.received)).toEqual([1, 'end']);
        expect(numbers(tabEvents.received)).toEqual([1, 2, 'end']);
        expect(numbers(everything.received)).toEqual([1, 2, 3, 5, 'end']);
        expect(tabEvents.received[1]).toEqual({
          subject: `chunklog.tab.${tab}.evt.chunk-open`,
          payload: { n: 2 },
        });
      });

      it('delivers 1,000 messages from one publisher complete and in order', async () => {
        const subject = `chunklog.test.${unique('order')}`;
        const { received, subscription } = await collect(bus, subject);
        track(subscription);
        for (let index = 0; index < 1_000; index++) {
          await peer.publish(subject, { index });
        }
        await waitUntil(() => received.length >= 1_000, '1,000 messages arrive');
        await sleep(50);
        expect(received.map(({ payload }) => (payload as { index: number }).index)).toEqual(
          Array.from({ length: 1_000 }, (_, index) => index),
        );
      });

      it('is live for other parties as soon as subscribe() and serve() resolve', async () => {
        for (let attempt = 0; attempt < 20; attempt++) {
          const subject = `chunklog.test.${unique('live')}`;
          const { received, subscription } = await collect(bus, subject);
          track(subscription);
          await peer.publish(subject, attempt);
          // A message published before the subscription were live would never arrive, so a
          // generous timeout only spares a loaded machine, it does not weaken the check.
          await waitUntil(() => received.length === 1, `message ${attempt} arrives`);
          const served = `chunklog.test.${unique('served')}`;
          track(await bus.serve(served, async () => attempt));
          expect(await peer.request(served, null)).toBe(attempt);
        }
      });

      it('calls handlers asynchronously, never inside publish()', async () => {
        const subject = `chunklog.test.${unique('async')}`;
        let insidePublish = false;
        let calledInsidePublish = false;
        let calls = 0;
        track(
          await bus.subscribe(subject, () => {
            calls++;
            if (insidePublish) calledInsidePublish = true;
          }),
        );
        insidePublish = true;
        const published = bus.publish(subject, 'x');
        insidePublish = false;
        await published;
        await waitUntil(() => calls === 1, 'the handler runs');
        expect(calledInsidePublish).toBe(false);
      });

      it('delivers JSON copies: undefined as null, dates as strings, no shared objects', async () => {
        const subject = `chunklog.test.${unique('json')}`;
        const { received, subscription } = await collect(bus, subject);
        track(subscription);
        const sent = { at: new Date(0), list: [1, { deep: true }] };
        await bus.publish(subject, sent);
        await bus.publish(subject, undefined);
        await waitUntil(() => received.length === 2, 'both arrive');
        expect(received[0]?.payload).toEqual({
          at: '1970-01-01T00:00:00.000Z',
          list: [1, { deep: true }],
        });
        expect(received[0]?.payload).not.toBe(sent);
        expect(received[1]?.payload).toBeNull();
      });

      it('stops delivering to a subscription once it is stopped', async () => {
        const subject = `chunklog.test.${unique('stop')}`;
        const stopped = await collect(bus, subject);
        const kept = await collect(bus, subject);
        track(kept.subscription);
        await bus.publish(subject, 1);
        await waitUntil(
          () => stopped.received.length === 1 && kept.received.length === 1,
          'both get the first message',
        );
        await stopped.subscription.stop();
        await bus.publish(subject, 2);
        await bus.publish(subject, 3);
        await waitUntil(() => kept.received.length === 3, 'the kept one gets the rest');
        await sleep(50);
        expect(stopped.received.map(({ payload }) => payload)).toEqual([1]);
      });

      it('refuses wildcards in a published subject and malformed subjects', async () => {
        await expect(bus.publish('chunklog.*.evt', 1)).rejects.toBeInstanceOf(InvalidInputError);
        await expect(bus.publish('chunklog..evt', 1)).rejects.toBeInstanceOf(InvalidInputError);
        await expect(bus.subscribe('chunklog.>.evt', () => {})).rejects.toBeInstanceOf(
          InvalidInputError,
        );
      });
    });

    describe('request and serve', () => {
      it('answers a request with the handler value, passing the contract subject', async () => {
        const tab = unique('tab');
        track(
          await bus.serve('chunklog.tab.*.snapshot', async (payload, subject) => ({
            subject,
            echo: payload,
          })),
        );
        const reply = await peer.request(`chunklog.tab.${tab}.snapshot`, { ask: 1 });
        expect(reply).toEqual({ subject: `chunklog.tab.${tab}.snapshot`, echo: { ask: 1 } });
      });

      it('rejects with RequestTimeoutError when the server does not answer in time', async () => {
        const subject = `chunklog.test.${unique('slow')}`;
        track(await bus.serve(subject, () => sleep(2_000).then(() => 'late')));
        const started = Date.now();
        const failure = await bus.request(subject, {}, { timeoutMs: 200 }).catch((e) => e);
        expect(failure).toBeInstanceOf(RequestTimeoutError);
        expect(Date.now() - started).toBeGreaterThanOrEqual(150);
        expect(Date.now() - started).toBeLessThan(1_500);
      });

      it('rejects at once with NoRespondersError when nobody serves the subject', async () => {
        const started = Date.now();
        const failure = await bus
          .request(`chunklog.test.${unique('nobody')}`, {}, { timeoutMs: 3_000 })
          .catch((e) => e);
        expect(failure).toBeInstanceOf(NoRespondersError);
        expect(Date.now() - started).toBeLessThan(1_000);
      });

      it('carries handler errors back as the same named error', async () => {
        const subject = `chunklog.test.${unique('failing')}`;
        track(
          await bus.serve(subject, async (payload) => {
            if (payload === 'missing') throw new NotFoundError('no such tool');
            throw new Error('disk on fire');
          }),
        );
        const missing = (await bus.request(subject, 'missing').catch((e) => e)) as NotFoundError;
        expect(missing).toBeInstanceOf(NotFoundError);
        expect(missing.message).toContain('no such tool');
        const crashed = (await bus.request(subject, 'other').catch((e) => e)) as RemoteHandlerError;
        expect(crashed).toBeInstanceOf(RemoteHandlerError);
        expect(crashed.code).toBe('unavailable');
        expect(crashed.message).toContain('disk on fire');
      });

      it('answers with an error, not silence, when the handler returns a value that is not JSON', async () => {
        const subject = `chunklog.test.${unique('unencodable')}`;
        track(await bus.serve(subject, async () => ({ count: 1n })));
        const started = Date.now();
        const failure = (await peer
          .request(subject, null, { timeoutMs: 5_000 })
          .catch((e) => e)) as RemoteHandlerError;
        expect(failure).toBeInstanceOf(RemoteHandlerError);
        expect(failure.code).toBe('unavailable');
        expect(failure.message).toContain('not JSON-serializable');
        // An answer, not the request timing out.
        expect(Date.now() - started).toBeLessThan(4_000);
      });

      it('lets exactly one member of a queue group answer each request', async () => {
        const subject = `chunklog.test.${unique('group')}`;
        const calls = [0, 0, 0];
        for (const member of [0, 1, 2]) {
          track(
            await bus.serve(
              subject,
              async () => {
                calls[member] = (calls[member] ?? 0) + 1;
                return member;
              },
              { queue: 'tools' },
            ),
          );
        }
        const replies = await Promise.all(
          Array.from({ length: 60 }, (_, index) => peer.request(subject, index)),
        );
        await sleep(100);
        expect(calls.reduce((sum, count) => sum + count, 0)).toBe(60);
        expect(new Set(replies).size).toBeGreaterThan(1);
        replies.forEach((reply, index) => {
          expect(reply, `reply ${index}`).toBeTypeOf('number');
        });
      });
    });

    describe('work queues', () => {
      it('processes every item exactly once among two consumers under load', async () => {
        const queue = unique('load');
        const total = 300;
        const seen = new Map<number, number>();
        const byConsumer = [0, 0];
        const handlerFor = (consumer: 0 | 1) => async (item: WorkItem) => {
          const { index } = item.data as { index: number };
          seen.set(index, (seen.get(index) ?? 0) + 1);
          byConsumer[consumer] = (byConsumer[consumer] ?? 0) + 1;
          await sleep(Math.random() * 3);
          await item.ack();
        };
        track(await bus.consume(queue, handlerFor(0), { ackWaitMs: 10_000, concurrency: 4 }));
        track(await peer.consume(queue, handlerFor(1), { ackWaitMs: 10_000, concurrency: 4 }));
        await Promise.all(
          Array.from({ length: total }, (_, index) =>
            (index % 2 === 0 ? bus : peer).enqueue(
              queue,
              { index },
              { msgId: `${queue}-${index}` },
            ),
          ),
        );
        await waitUntil(() => seen.size === total, 'every item is processed', 30_000);
        await sleep(300);
        expect([...seen.values()].every((count) => count === 1)).toBe(true);
        expect(byConsumer[0]).toBeGreaterThan(0);
        expect(byConsumer[1]).toBeGreaterThan(0);
        expect((byConsumer[0] ?? 0) + (byConsumer[1] ?? 0)).toBe(total);
      });

      it('keeps items enqueued while no consumer runs and delivers them in order later', async () => {
        const queue = unique('early');
        for (let index = 0; index < 5; index++) {
          await peer.enqueue(queue, { index }, { msgId: `${queue}-${index}` });
        }
        await sleep(200);
        const received: number[] = [];
        track(
          await bus.consume(queue, async (item) => {
            received.push((item.data as { index: number }).index);
            await item.ack();
          }),
        );
        await waitUntil(() => received.length === 5, 'the five waiting items arrive');
        expect(received).toEqual([0, 1, 2, 3, 4]);
      });

      it('numbers items with increasing sequences in enqueue order, also handled concurrently', async () => {
        const queue = unique('sequence');
        const total = 40;
        // Enqueued one after another from two parties, as two gateways answering in turn.
        for (let index = 0; index < total; index++) {
          await (index % 2 === 0 ? bus : peer).enqueue(
            queue,
            { index },
            { msgId: `${queue}-${index}` },
          );
        }
        const sequences = new Map<number, number[]>();
        let running = 0;
        let mostRunning = 0;
        track(
          await bus.consume(
            queue,
            async (item) => {
              running++;
              mostRunning = Math.max(mostRunning, running);
              const { index } = item.data as { index: number };
              sequences.set(index, [...(sequences.get(index) ?? []), item.sequence]);
              // Handlers finish out of order; the first delivery of every third is given back.
              await sleep(Math.random() * 20);
              running--;
              if (index % 3 === 0 && item.deliveryCount === 1) await item.nak();
              else await item.ack();
            },
            { ackWaitMs: 10_000, concurrency: 4 },
          ),
        );
        await waitUntil(
          () =>
            sequences.size === total &&
            [...sequences.entries()].every(
              ([index, seen]) => seen.length === (index % 3 === 0 ? 2 : 1),
            ),
          'every item is handled, and every given-back one again',
          20_000,
        );
        expect(mostRunning).toBeGreaterThan(1);
        const byIndex = Array.from({ length: total }, (_, index) => sequences.get(index)!);
        // A redelivery carries the item's own sequence again.
        for (const seen of byIndex) expect(new Set(seen).size).toBe(1);
        const firsts = byIndex.map((seen) => seen[0]!);
        expect(firsts.every((sequence) => Number.isSafeInteger(sequence))).toBe(true);
        for (let index = 1; index < total; index++) {
          expect(firsts[index], `item ${index}`).toBeGreaterThan(firsts[index - 1]!);
        }
      });

      it('stores a msgId once within the dedupe window', async () => {
        const queue = unique('dedupe');
        await bus.enqueue(queue, { version: 1 }, { msgId: 'same' });
        await peer.enqueue(queue, { version: 2 }, { msgId: 'same' });
        await bus.enqueue(queue, { version: 3 }, { msgId: 'other' });
        await bus.enqueue(queue, { version: 4 }, { msgId: 'same' });
        const received: unknown[] = [];
        track(
          await bus.consume(queue, async (item) => {
            received.push(item.data);
            await item.ack();
          }),
        );
        await waitUntil(() => received.length >= 2, 'two items arrive');
        await sleep(300);
        expect(received).toEqual([{ version: 1 }, { version: 3 }]);
      });

      it('redelivers an item to another consumer after its consumer stopped without acking', async () => {
        const queue = unique('dead');
        const firstDelivery: number[] = [];
        const dead = await bus.consume(
          queue,
          async (item) => {
            firstDelivery.push(item.deliveryCount);
            // Dies: no ack, no nak.
          },
          { ackWaitMs: 1_000 },
        );
        await bus.enqueue(queue, { job: 'x' }, { msgId: `${queue}-x` });
        await waitUntil(() => firstDelivery.length === 1, 'the first consumer gets the item');
        const deliveredAt = Date.now();
        await dead.stop();
        const redelivered: { count: number; at: number; data: unknown }[] = [];
        track(
          await peer.consume(
            queue,
            async (item) => {
              redelivered.push({ count: item.deliveryCount, at: Date.now(), data: item.data });
              await item.ack();
            },
            { ackWaitMs: 1_000 },
          ),
        );
        await waitUntil(() => redelivered.length === 1, 'the survivor gets the item', 10_000);
        expect(firstDelivery).toEqual([1]);
        expect(redelivered[0]?.count).toBe(2);
        expect(redelivered[0]?.data).toEqual({ job: 'x' });
        expect((redelivered[0]?.at ?? 0) - deliveredAt).toBeGreaterThanOrEqual(700);
        await sleep(1_300);
        expect(redelivered).toHaveLength(1);
      });

      it('redelivers a nakked item after its delay, and at once without one', async () => {
        const queue = unique('nak');
        const deliveries: { count: number; at: number }[] = [];
        track(
          await bus.consume(queue, async (item) => {
            deliveries.push({ count: item.deliveryCount, at: Date.now() });
            if (item.deliveryCount === 1) await item.nak(2_000);
            else if (item.deliveryCount === 2) await item.nak();
            else await item.ack();
          }),
        );
        await bus.enqueue(queue, 'job', { msgId: `${queue}-job` });
        await waitUntil(() => deliveries.length === 3, 'three deliveries');
        const [first, second, third] = deliveries;
        expect(deliveries.map(({ count }) => count)).toEqual([1, 2, 3]);
        // Apart by a wide margin, so a loaded machine cannot blur "after its delay" into "at once".
        expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1_900);
        expect((third?.at ?? 0) - (second?.at ?? 0)).toBeLessThan(1_500);
      });

      it('redelivers the item of a handler that threw', async () => {
        const queue = unique('throws');
        const counts: number[] = [];
        track(
          await bus.consume(queue, async (item) => {
            counts.push(item.deliveryCount);
            if (item.deliveryCount === 1) throw new Error('transient');
            await item.ack();
          }),
        );
        await bus.enqueue(queue, 'job', { msgId: `${queue}-job` });
        await waitUntil(() => counts.length === 2, 'the retry arrives');
        expect(counts).toEqual([1, 2]);
      });

      it('does not redeliver an item whose handler keeps calling working()', async () => {
        const queue = unique('working');
        const counts: number[] = [];
        let done = false;
        track(
          await bus.consume(
            queue,
            async (item) => {
              counts.push(item.deliveryCount);
              // 2.4 s of work against a 2 s ack wait: without working() the item would be
              // redelivered, while each beat leaves 1.6 s of slack for a loaded machine.
              for (let beat = 0; beat < 6; beat++) {
                await sleep(400);
                await item.working();
              }
              await item.ack();
              done = true;
            },
            { ackWaitMs: 2_000, concurrency: 2 },
          ),
        );
        await bus.enqueue(queue, 'long job', { msgId: `${queue}-job` });
        await waitUntil(() => done, 'the long job finishes');
        await sleep(200);
        expect(counts).toEqual([1]);
      });

      it('refuses a queue name that cannot name a stream', async () => {
        await expect(bus.enqueue('bad.name', 1, { msgId: 'a' })).rejects.toBeInstanceOf(
          InvalidInputError,
        );
      });
    });

    describe('lifecycle', () => {
      it('reports ready while open and not after close', async () => {
        const own = await createBus();
        expect(await own.ready()).toBe(true);
        await own.close();
        expect(await own.ready()).toBe(false);
        await expect(own.publish('chunklog.test.closed', 1)).rejects.toBeInstanceOf(
          BusUnavailableError,
        );
        await expect(own.subscribe('chunklog.test.closed', () => {})).rejects.toBeInstanceOf(
          BusUnavailableError,
        );
        await expect(own.request('chunklog.test.closed', 1)).rejects.toBeInstanceOf(
          BusUnavailableError,
        );
        await expect(own.enqueue('closed', 1, { msgId: 'a' })).rejects.toBeInstanceOf(
          BusUnavailableError,
        );
      });
    });
  });
}
