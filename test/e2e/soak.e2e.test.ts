/**
 * A randomized soak of the whole product over real HTTP: the real gateway and two real workers
 * (child processes) on the real Postgres and NATS, the simulator in this process as the model
 * (through the workers' real SDK). About twenty tabs are driven at once, each with a random
 * sequence of what real clients do: messages in every mode (some with an Idempotency-Key, some
 * of those posted twice), tool turns, thinking, slow and failing model answers, cancels, SSE and
 * WebSocket clients that drop and resume, page and context reads; in a third of the tabs tool
 * calls wait for a person, who approves, edits or denies them at random (sometimes twice: 409),
 * and two workers are restarted mid-drive. Once every tab is idle with nothing waiting, the
 * contracts' invariants are checked over every answer and every event: every started turn (or
 * run of a paused turn) ends, every tool call has exactly one result, every seq once per client.
 *
 * A second run does the same on a Postgres cluster of its own that crashes (`pg_ctl stop -m
 * immediate`) mid-drive and comes back seconds later: clients wait out the 503s, and every
 * invariant holds across it (nothing accepted lost, every turn ended, every seq once).
 *
 * Seeded: the seed is printed; `SOAK_SEED` replays the same choices (timings still vary).
 */

import { validateRequest } from '@chunklog/anthropic-sim';
import {
  addUsage,
  buildRequest,
  type Chunk,
  ChunkSchema,
  emptyUsage,
  type Tab,
  TabSchema,
  TurnDoneReasonSchema,
  tabRequestOptions,
} from '@chunklog/chunk-core';
import {
  type PrivatePostgres,
  privatePostgresAvailable,
  sleep,
  startPrivatePostgres,
  testNatsUrl,
  testPostgresUrl,
} from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createE2eBackend, type E2eBackend, type E2eGateway } from './e2e-backend';
import { openLedgerEventSource } from './ledger-event-source';
import { openLedgerWebSocket } from './ledger-web-socket';
import { seededRandom } from './seeded-random';
import type { ServiceProcess } from './service-process';
import { StreamLedger } from './stream-ledger';

const SEED = Number(process.env.SOAK_SEED ?? 20_261_130);
/** How long the clients keep acting; the drain and the checks come after. */
const DRIVE_MS = 16_000;
const LEASE_MS = 3_000;
/** The workers' defaults (e2e-backend sets MODEL; MAX_TOKENS is the worker's default). */
const WORKER_DEFAULTS = { model: 'claude-sonnet-4-6', maxTokens: 4096 };

const postgresUrl = await testPostgresUrl();
const natsUrl = await testNatsUrl();
const reachable = postgresUrl !== null && natsUrl !== null;
if (!reachable) console.warn('!!! SKIPPED: the soak needs a real Postgres and NATS');

const ErrorBodySchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
const PageSchema = z.object({
  chunks: z.array(ChunkSchema),
  total: z.number().int(),
  hasMore: z.boolean(),
});
const AcceptedSchema = z.object({ chunkId: z.uuid() });
const ContextSchema = z.object({ request: z.unknown(), source: z.string().optional() });

interface Exchange {
  method: string;
  path: string;
  status: number;
  body: unknown;
}

/** A 503 the client waited out: the answer's body and its Retry-After header. */
interface Unavailable extends Exchange {
  retryAfter: string | null;
}

/**
 * Speaks HTTP to the gateway and keeps every answer for the checks. With `retryUnavailable`, a
 * 503 is waited out as a real client would (Retry-After, capped at a second) and tried again;
 * each 503 is kept apart in `unavailable` and only the final answer counts as the exchange.
 */
class RecordingClient {
  readonly exchanges: Exchange[] = [];
  readonly unavailable: Unavailable[] = [];

  constructor(
    readonly baseUrl: string,
    readonly key: string,
    readonly retryUnavailable = false,
  ) {}

  get authorization(): Record<string, string> {
    return { authorization: `Bearer ${this.key}` };
  }

  async call(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Exchange> {
    const headers: Record<string, string> = { ...this.authorization, ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    for (let attempt = 0; ; attempt += 1) {
      let exchange: Exchange;
      let retryAfter: string | null = null;
      try {
        const response = await fetch(`${this.baseUrl}${path}`, {
          method,
          headers,
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
        });
        const text = await response.text();
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {}
        exchange = { method, path, status: response.status, body };
        retryAfter = response.headers.get('retry-after');
      } catch (error) {
        // No answer at all: recorded as status 0, which the checks count as a failure.
        exchange = { method, path, status: 0, body: String(error) };
      }
      if (exchange.status === 503 && this.retryUnavailable && attempt < 120) {
        this.unavailable.push({ ...exchange, retryAfter });
        await sleep(Math.min(1_000, Number(retryAfter ?? 1) * 1_000));
        continue;
      }
      this.exchanges.push(exchange);
      return exchange;
    }
  }
}

type Mode = 'interrupt' | 'enqueue' | 'reject';

interface Message {
  text: string;
  mode: Mode;
  key: string | null;
  /** The status and chunk id of each post of it (a keyed message may be posted twice). */
  attempts: { status: number; chunkId: string | null }[];
  /** Its place among the tab's 202s (the first 202 of it), or null if never accepted. */
  acceptedOrder: number | null;
}

interface Connection {
  close(): void;
}

interface TabRun {
  index: number;
  id: string;
  thinking: boolean;
  /** Its calculator and get_ calls wait for a decision. */
  approval: boolean;
  messages: Message[];
  accepted: number;
  /** Open from before the first message to the end: sees every event. */
  steady: StreamLedger;
  /** Drops and resumes at random, then stays from the end of the drive on. */
  flaky: StreamLedger;
  connections: Connection[];
  pageProblems: string[];
  counts: {
    posts: number;
    reposts: number;
    cancels: number;
    pages: number;
    resumes: number;
    /** Resumes the gateway refused (503 during an outage) and the client tried again. */
    refusedResumes: number;
    /** Decisions on waiting calls accepted, and second decisions on a call (each a 409). */
    decisions: number;
    decidedTwice: number;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function between(random: () => number, low: number, high: number): number {
  return Math.floor(low + random() * (high - low + 1));
}

/** A user text with simulator directives (packages/anthropic-sim/README.md). */
function scriptedText(random: () => number, run: TabRun, number: number): string {
  const parts = [`soak message ${run.index}.${number}`];
  const kind = random();
  if (kind < 0.35) {
    const tools = [
      '[[sim: tool get_time {}]]',
      '[[sim: tool calculator {"expression":"6*7"}]]',
      '[[sim: tool sleep {"milliseconds":150}]]',
    ];
    parts.push(pick(random, tools));
    if (random() < 0.3) parts.push(pick(random, tools));
    parts.push(`[[sim: steps ${between(random, 1, 3)}]]`);
    parts.push(
      `[[sim: words ${between(random, 10, 40)}]] [[sim: rate ${between(random, 80, 200)}]]`,
    );
  } else if (kind < 0.5) {
    parts.push(
      `[[sim: delay ${between(random, 200, 600)}]] [[sim: words ${between(random, 5, 30)}]]`,
    );
  } else if (kind < 0.58) {
    parts.push('[[sim: error 529 times=1]] [[sim: words 15]]');
  } else if (kind < 0.64) {
    parts.push(
      '[[sim: stream-error overloaded_error after=3 times=1]] [[sim: words 30]] [[sim: rate 100]]',
    );
  } else {
    parts.push(
      `[[sim: words ${between(random, 20, 120)}]] [[sim: rate ${between(random, 60, 200)}]]`,
    );
  }
  if (run.thinking && random() < 0.7)
    parts.push(`[[sim: think "plan for ${run.index}.${number}"]]`);
  return parts.join(' ');
}

interface SoakVariant {
  title: string;
  tabCount: number;
  /**
   * The database goes away mid-drive: the suite runs on a Postgres cluster of its own, stopped
   * at once (a crash) `afterMs` into the drive and started again `forMs` later. Clients wait
   * out the 503s as real ones would; every invariant below must still hold.
   */
  outage?: { afterMs: number; forMs: number };
}

function defineSoak(variant: SoakVariant): void {
  const runnable = reachable && (variant.outage === undefined || privatePostgresAvailable());
  if (reachable && !runnable) console.warn(`!!! SKIPPED: ${variant.title} (no initdb/pg_ctl)`);

  describe.skipIf(!runnable)(variant.title, () => {
    let backend: E2eBackend;
    let gateway: E2eGateway;
    let client: RecordingClient;
    let privatePostgres: PrivatePostgres | undefined;
    let workers: ServiceProcess[] = [];

    beforeAll(async () => {
      // The soak sends far more than a person would; the per-key limit is not under test here.
      process.env.RATE_LIMIT_PER_MINUTE = '1000000';
      if (variant.outage) privatePostgres = await startPrivatePostgres();
      backend = await createE2eBackend({
        postgresUrl: privatePostgres?.url ?? postgresUrl!,
        natsUrl: natsUrl!,
        leaseMs: LEASE_MS,
      });
      const [started, ...running] = await Promise.all([
        backend.startGateway(),
        backend.startWorker({ workerId: 'soak-worker-1' }),
        backend.startWorker({ workerId: 'soak-worker-2' }),
      ]);
      gateway = started;
      workers = running;
      client = new RecordingClient(
        gateway.baseUrl,
        backend.tenants.alpha.key,
        variant.outage !== undefined,
      );
    });

    afterAll(async () => {
      await backend?.close();
      await privatePostgres?.dispose();
    });

    it('keeps every contract invariant under random concurrent clients', async ({
      onTestFailed,
    }) => {
      onTestFailed(() => console.info(backend.processOutputs()));
      console.info(`soak seed ${SEED} (set SOAK_SEED to replay)`);
      const base = (run: TabRun) => `/v1/tabs/${run.id}`;
      const wsBase = gateway.baseUrl.replace('http', 'ws');

      // ---- set-up: tabs and a steady client on each, live before anything is posted ----
      const runs: TabRun[] = [];
      for (let index = 0; index < variant.tabCount; index += 1) {
        const thinking = index % 3 === 0;
        // Every third tab's calculator and get_ calls wait for a person, who decides at random.
        const approval = index % 3 === 1;
        const created = await client.call('POST', '/v1/tabs', {
          body: {
            title: `soak ${index}`,
            config: {
              ...(thinking ? { thinking: { budgetTokens: 2048 } } : {}),
              ...(approval ? { approval: { tools: ['calculator', 'get_*'] } } : {}),
            },
          },
        });
        expect(created.status).toBe(201);
        const id = z.object({ tab: TabSchema }).parse(created.body).tab.id;
        runs.push({
          index,
          id,
          thinking,
          approval,
          messages: [],
          accepted: 0,
          steady: new StreamLedger(),
          flaky: new StreamLedger(),
          connections: [],
          pageProblems: [],
          counts: {
            posts: 0,
            reposts: 0,
            cancels: 0,
            pages: 0,
            resumes: 0,
            refusedResumes: 0,
            decisions: 0,
            decidedTwice: 0,
          },
        });
      }
      try {
        for (const run of runs) {
          if (run.index % 2 === 0) {
            const source = openLedgerEventSource(
              `${gateway.baseUrl}${base(run)}/events`,
              run.steady,
              client.authorization,
            );
            run.connections.push(source);
            await source.opened;
          } else {
            run.connections.push(
              await openLedgerWebSocket(
                `${wsBase}${base(run)}/ws`,
                run.steady,
                client.authorization,
              ),
            );
          }
          await run.steady.waitUntil(
            () => run.steady.streamLives.length > 0,
            20_000,
            'stream-live',
          );
        }

        // ---- the drive ----
        const driveEnds = Date.now() + DRIVE_MS;

        const post = async (run: TabRun, message: Message) => {
          const exchange = await client.call('POST', `${base(run)}/messages`, {
            body: { text: message.text, mode: message.mode },
            headers: message.key ? { 'idempotency-key': message.key } : {},
          });
          const chunkId =
            exchange.status === 202 ? AcceptedSchema.parse(exchange.body).chunkId : null;
          message.attempts.push({ status: exchange.status, chunkId });
          if (chunkId && message.acceptedOrder === null) {
            message.acceptedOrder = run.accepted;
            run.accepted += 1;
          }
        };

        const newMessage = async (run: TabRun, random: () => number, mode?: Mode) => {
          const message: Message = {
            text: scriptedText(random, run, run.messages.length),
            mode: mode ?? pick(random, ['interrupt', 'interrupt', 'enqueue', 'enqueue', 'reject']),
            key: random() < 0.35 ? `soak-${SEED}-${run.index}-${run.messages.length}` : null,
            attempts: [],
            acceptedOrder: null,
          };
          run.messages.push(message);
          run.counts.posts += 1;
          await post(run, message);
          // A client retrying at once, as after a lost answer.
          if (message.key && random() < 0.5) {
            run.counts.reposts += 1;
            await post(run, message);
          }
        };

        const readPage = async (run: TabRun, random: () => number) => {
          run.counts.pages += 1;
          const limit = between(random, 1, 20);
          const tab = await client.call('GET', base(run));
          const lastSeq =
            tab.status === 200 ? TabSchema.parse((tab.body as { tab: Tab }).tab).lastSeq : 0;
          const style = random();
          const anchor = between(random, 0, lastSeq + 1);
          const query =
            style < 0.4
              ? `limit=${limit}`
              : style < 0.7
                ? `after=${anchor}&limit=${limit}`
                : `before=${Math.max(anchor, 1)}&limit=${limit}`;
          const exchange = await client.call('GET', `${base(run)}/chunks?${query}`);
          if (exchange.status !== 200) return;
          const parsed = PageSchema.safeParse(exchange.body);
          if (!parsed.success) {
            run.pageProblems.push(`${query}: ${parsed.error.message}`);
            return;
          }
          const { chunks, total } = parsed.data;
          const seqs = chunks.map((chunk) => chunk.seq);
          const problem = (what: string) =>
            run.pageProblems.push(`${query}: ${what} (seqs ${seqs.join(',')}, total ${total})`);
          if (chunks.length > limit) problem('more chunks than the limit');
          if (seqs.some((seq, at) => at > 0 && seq !== seqs[at - 1]! + 1))
            problem('not contiguous');
          if (chunks.some((chunk) => chunk.tabId !== run.id)) problem('a chunk of another tab');
          if (seqs.some((seq) => seq > total)) problem('a seq above total');
          if (query.startsWith('after=') && seqs.length > 0 && seqs[0] !== anchor + 1)
            problem('after does not start right after');
          if (
            query.startsWith('before=') &&
            seqs.length > 0 &&
            seqs.at(-1) !== Math.max(anchor, 1) - 1
          )
            problem('before does not end right before');
          if (query.startsWith('limit=') && seqs.length > 0 && seqs.at(-1)! < lastSeq)
            problem('the tail page misses seqs the tab already had');
        };

        /** Decides every call the tab waits on: approve, approve with edited input, or deny. */
        const decide = async (run: TabRun, random: () => number) => {
          const tab = await client.call('GET', base(run));
          if (tab.status !== 200) return;
          const waiting = TabSchema.parse((tab.body as { tab: Tab }).tab).waiting;
          if (waiting === null) return;
          const decisions = waiting.calls.map((call) => {
            const choice = random();
            return choice < 0.5
              ? { callId: call.callId, decision: 'approve' }
              : choice < 0.75
                ? { callId: call.callId, decision: 'approve', input: { expression: '1+1' } }
                : { callId: call.callId, decision: 'deny', reason: `soak says no ${run.index}` };
          });
          const answer = await client.call('POST', `${base(run)}/approvals`, {
            body: { decisions },
          });
          // 409: another decision (or a cancel, an interrupt) came first.
          expect([202, 409], JSON.stringify(answer.body)).toContain(answer.status);
          if (answer.status !== 202) return;
          run.counts.decisions += decisions.length;
          if (random() < 0.3) {
            run.counts.decidedTwice += 1;
            const again = await client.call('POST', `${base(run)}/approvals`, {
              body: { decisions },
            });
            expect(again.status).toBe(409);
          }
        };

        const drive = async (run: TabRun) => {
          const random = seededRandom(SEED * 31 + run.index);
          // A first message that is always accepted, so every log builds a request.
          await newMessage(run, random, 'enqueue');
          while (Date.now() < driveEnds) {
            if (run.approval && random() < 0.4) await decide(run, random);
            const action = random();
            if (action < 0.45) {
              await newMessage(run, random);
            } else if (action < 0.53) {
              // A keyed message posted again later: a client retrying after a long outage.
              const keyed = run.messages.filter((message) => message.key);
              if (keyed.length > 0) {
                run.counts.reposts += 1;
                await post(run, pick(random, keyed));
              }
            } else if (action < 0.62) {
              run.counts.cancels += 1;
              await client.call('POST', `${base(run)}/cancel`);
            } else if (action < 0.85) {
              await readPage(run, random);
            } else if (action < 0.93) {
              await client.call('GET', base(run));
            } else {
              await client.call('GET', `${base(run)}/context`);
            }
            await sleep(between(random, 50, 900));
          }
        };

        const openResumed = async (run: TabRun, random: () => number): Promise<Connection> => {
          run.counts.resumes += 1;
          const after = run.flaky.lastSeq;
          const style = between(random, 0, 3);
          if (style === 3) {
            return openLedgerWebSocket(
              `${wsBase}${base(run)}/ws?after=${after}`,
              run.flaky,
              client.authorization,
            );
          }
          let url = `${gateway.baseUrl}${base(run)}/events`;
          let headers: Record<string, string> = client.authorization;
          if (style === 0) headers = { ...headers, 'last-event-id': String(after) };
          else if (style === 1) url += `?after=${after}`;
          else {
            const ticket = await client.call('POST', `${base(run)}/stream-tickets`);
            const value = z.object({ ticket: z.string() }).parse(ticket.body).ticket;
            url += `?after=${after}&ticket=${encodeURIComponent(value)}`;
            headers = {};
          }
          const source = openLedgerEventSource(url, run.flaky, headers);
          await source.opened;
          return source;
        };

        // A stream the gateway refuses (503 while the database is away) is tried again, as a
        // client does; without an outage a refusal fails the soak.
        const openPatiently = async (run: TabRun, random: () => number): Promise<Connection> => {
          for (let attempt = 0; ; attempt += 1) {
            try {
              return await openResumed(run, random);
            } catch (error) {
              if (variant.outage === undefined || attempt >= 60) throw error;
              run.counts.refusedResumes += 1;
              await sleep(500);
            }
          }
        };

        const flake = async (run: TabRun) => {
          const random = seededRandom(SEED * 37 + run.index + 1_000);
          while (Date.now() < driveEnds) {
            const connection = await openPatiently(run, random);
            run.connections.push(connection);
            await sleep(between(random, 30, 1_200));
            connection.close();
            await sleep(between(random, 0, 300));
          }
          // From here on it stays: it must end up with every seq exactly once.
          run.connections.push(await openPatiently(run, random));
        };

        // Without an outage, a worker is restarted mid-drive, as a deploy does, twice: stopped
        // (SIGTERM; what it holds after a short grace is taken over) and another started in its
        // place. Paused tabs held by nobody are woken by whichever worker runs.
        let restarts = 0;
        const restart = async () => {
          if (variant.outage) return;
          const random = seededRandom(SEED * 43);
          for (const at of [0.3, 0.65]) {
            await sleep(Math.max(0, driveEnds - DRIVE_MS + at * DRIVE_MS - Date.now()));
            const victim = workers.splice(Math.floor(random() * workers.length), 1)[0]!;
            await victim.stop('SIGTERM', 2_000);
            restarts += 1;
            workers.push(await backend.startWorker({ workerId: `soak-worker-r${restarts}` }));
          }
        };

        const outage = async () => {
          if (!variant.outage || !privatePostgres) return;
          await sleep(variant.outage.afterMs);
          await privatePostgres.stop();
          await sleep(variant.outage.forMs);
          await privatePostgres.start();
        };

        // Settled, not all: a failing client must not leave the others running past the test.
        const outcomes = await Promise.allSettled([
          outage(),
          restart(),
          ...runs.flatMap((run) => [drive(run), flake(run)]),
        ]);
        for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;

        // ---- the drain: every tab idle, nothing waiting, every accepted message accounted for ----
        const drainRandom = seededRandom(SEED * 41);
        const settled = async (run: TabRun) => {
          const tab = await client.call('GET', base(run));
          if (tab.status === 200 && (tab.body as { tab: Tab }).tab.status === 'waiting') {
            // A person comes back and decides.
            await decide(run, drainRandom);
            return false;
          }
          if (tab.status !== 200 || (tab.body as { tab: Tab }).tab.status !== 'idle') return false;
          if ((await backend.store.inboxList(run.id)).length > 0) return false;
          const log = await backend.store.readAll(run.id);
          const ids = new Set(log.map((chunk) => chunk.id));
          const notices = log.filter(
            (chunk) =>
              chunk.type === 'system' &&
              (chunk.data as { kind?: string }).kind === 'message-rejected',
          ).length;
          let missingRejects = 0;
          for (const message of run.messages) {
            const chunkId = message.attempts.find((attempt) => attempt.chunkId)?.chunkId;
            if (!chunkId || ids.has(chunkId)) continue;
            if (message.mode !== 'reject') return false;
            missingRejects += 1;
          }
          return missingRejects <= notices;
        };
        const drainStarted = Date.now();
        const pending = new Set(runs);
        while (pending.size > 0 && Date.now() - drainStarted < 120_000) {
          for (const run of [...pending]) if (await settled(run)) pending.delete(run);
          if (pending.size > 0) await sleep(250);
        }
        const drainMs = Date.now() - drainStarted;
        for (const run of pending) {
          // What a tab that never settled was doing, for the failure report below.
          console.info(
            `tab ${run.index} (${run.id}) unsettled: lease ${JSON.stringify(await backend.store.getLease(run.id))}, ` +
              `inbox ${JSON.stringify(await backend.store.inboxList(run.id))}, ` +
              `last chunks ${JSON.stringify((await backend.store.readAll(run.id)).slice(-4))}, ` +
              `last requests ${JSON.stringify(
                backend.simulator.requests
                  .filter((request) =>
                    JSON.stringify(request.body).includes(`soak message ${run.index}.`),
                  )
                  .slice(-2)
                  .map((request) => ({ ...request, body: undefined })),
              )}`,
          );
        }

        // ---- the checks ----
        const logs = new Map<string, Chunk[]>();
        const tabs = new Map<string, Tab>();
        for (const run of runs) {
          const chunks: Chunk[] = [];
          let total = -1;
          for (;;) {
            const exchange = await client.call(
              'GET',
              `${base(run)}/chunks?after=${chunks.at(-1)?.seq ?? 0}&limit=500`,
            );
            expect(exchange.status).toBe(200);
            const page = PageSchema.parse(exchange.body);
            chunks.push(...page.chunks);
            total = page.total;
            if (!page.hasMore) break;
          }
          logs.set(run.id, chunks);
          // 3. seqs gap-free from 1, ids unique, total and lastSeq agree.
          expect(
            chunks.map((chunk) => chunk.seq),
            `tab ${run.index} seqs`,
          ).toEqual(chunks.map((_, at) => at + 1));
          expect(new Set(chunks.map((chunk) => chunk.id)).size, `tab ${run.index} ids`).toBe(
            chunks.length,
          );
          expect(total, `tab ${run.index} total`).toBe(chunks.length);
          const tabExchange = await client.call('GET', base(run));
          const tab = z.object({ tab: TabSchema }).parse(tabExchange.body).tab;
          tabs.set(run.id, tab);
          expect(tab.lastSeq, `tab ${run.index} lastSeq`).toBe(chunks.length);
          expect(tab.status, `tab ${run.index} status after ${drainMs} ms of drain`).toBe('idle');
        }
        // The last seals may still be on their way to the clients (each ledger checks itself).
        await Promise.all(
          runs.flatMap((run) =>
            [run.steady, run.flaky].map((ledger) =>
              ledger
                .waitUntil(
                  () => ledger.lastSeq >= logs.get(run.id)!.length,
                  20_000,
                  `tab ${run.index} last seal`,
                )
                .catch(() => {}),
            ),
          ),
        );

        const totals = {
          posts: 0,
          reposts: 0,
          cancels: 0,
          pages: 0,
          resumes: 0,
          refusedResumes: 0,
          accepted: 0,
          conflicts: 0,
          turns: 0,
          chunks: 0,
          interrupts: 0,
          rejectedByWorker: 0,
          thinking: 0,
          toolCalls: 0,
          cutShort: 0,
          midBlockResumes: 0,
          cacheRead: 0,
          intakeReorders: 0,
          decisions: 0,
          decidedTwice: 0,
          approvalRequests: 0,
          approvalDecisions: 0,
          workerRestarts: 0,
        };
        totals.workerRestarts = restarts;
        const reasons = new Map<string, number>();
        for (const run of runs) {
          const chunks = logs.get(run.id)!;
          const tab = tabs.get(run.id)!;
          for (const [name, value] of Object.entries(run.counts))
            totals[name as keyof typeof run.counts] += value;
          totals.chunks += chunks.length;
          totals.interrupts += chunks.filter(
            (chunk) => chunk.role === 'user' && chunk.step > 0,
          ).length;
          totals.thinking += chunks.filter((chunk) => chunk.type === 'thinking').length;
          totals.toolCalls += chunks.filter((chunk) => chunk.type === 'tool_call').length;
          totals.cutShort += chunks.filter(
            (chunk) => (chunk.data as { interrupted?: boolean }).interrupted === true,
          ).length;
          totals.midBlockResumes += run.flaky.midBlockDisconnects;
          totals.cacheRead += tab.usage.cacheReadInputTokens;

          // 2. every accepted message is its user chunk, once, in acceptance order; a 409 added none.
          const userTexts = chunks.filter((chunk) => chunk.role === 'user');
          const position = new Map(chunks.map((chunk, at) => [chunk.id, at]));
          const notices = chunks.filter(
            (chunk) =>
              chunk.type === 'system' &&
              (chunk.data as { kind?: string }).kind === 'message-rejected',
          ).length;
          let rejectedByWorker = 0;
          const placed: { message: Message; at: number }[] = [];
          for (const message of run.messages) {
            const ids = new Set(
              message.attempts.flatMap((attempt) => (attempt.chunkId ? [attempt.chunkId] : [])),
            );
            expect(
              ids.size,
              `tab ${run.index}: one chunk id per Idempotency-Key`,
            ).toBeLessThanOrEqual(1);
            for (const attempt of message.attempts) {
              if (attempt.status === 409)
                expect(message.mode, 'only reject answers 409').toBe('reject');
              else expect(attempt.status, `tab ${run.index}: ${message.text}`).toBe(202);
            }
            const withText = userTexts.filter(
              (chunk) => (chunk.data as { text?: string }).text === message.text,
            );
            const [chunkId] = [...ids];
            if (chunkId === undefined) {
              totals.conflicts += 1;
              expect(withText, `tab ${run.index}: a 409 added a chunk`).toEqual([]);
              continue;
            }
            totals.accepted += 1;
            const at = position.get(chunkId);
            if (at === undefined) {
              // The gateway saw the tab idle, the worker found it running: the message is refused
              // with a `message-rejected` notice instead (services/agent-worker/README.md, intake).
              expect(
                message.mode,
                `tab ${run.index}: accepted message missing: ${message.text}`,
              ).toBe('reject');
              expect(withText).toEqual([]);
              rejectedByWorker += 1;
              continue;
            }
            expect(
              withText.map((chunk) => chunk.id),
              `tab ${run.index}: ${message.text}`,
            ).toEqual([chunkId]);
            expect(chunks[at]).toMatchObject({ role: 'user', type: 'text' });
            placed.push({ message, at });
          }
          expect(rejectedByWorker, `tab ${run.index}: refusals without a notice`).toBe(notices);
          totals.rejectedByWorker += rejectedByWorker;
          expect(userTexts.length, `tab ${run.index}: user chunks of no accepted message`).toBe(
            placed.length,
          );
          // Acceptance order is log order, with two exceptions the contracts state:
          // - an `interrupt` joins the running turn while an `enqueue` accepted before it waits
          //   for a turn of its own (docs/architecture.md, "Messages, intake and cancel");
          // - the workers store intake items concurrently, and a message stored only after a later
          //   one's turn began joins that turn (an interrupt) or waits for the next one (an
          //   enqueue), as if sent later (services/agent-worker/README.md, Intake, "Two limits").
          //   Such a message lands in the later one's turn or the turn right after it.
          const turnOrder = new Map<string, number>();
          for (const chunk of chunks)
            if (!turnOrder.has(chunk.turnId)) turnOrder.set(chunk.turnId, turnOrder.size);
          const turnOf = (at: number) => turnOrder.get(chunks[at]!.turnId)!;
          placed.sort((a, b) => a.message.acceptedOrder! - b.message.acceptedOrder!);
          for (let later = 0; later < placed.length; later += 1) {
            for (let earlier = 0; earlier < later; earlier += 1) {
              const first = placed[earlier]!;
              const second = placed[later]!;
              if (second.at > first.at) continue;
              const doubleTexting =
                first.message.mode === 'enqueue' && second.message.mode === 'interrupt';
              const turnsApart = turnOf(first.at) - turnOf(second.at);
              if (!doubleTexting) totals.intakeReorders += 1;
              expect(
                doubleTexting || turnsApart <= 1,
                `tab ${run.index}: "${second.message.text}" (${second.message.mode}) accepted after "${first.message.text}" (${first.message.mode}) but logged ${turnsApart} turns before it`,
              ).toBe(true);
            }
          }

          // 4. the log builds a request the API accepts: the workers' own (/context) and ours.
          const context = await client.call('GET', `${base(run)}/context`);
          expect(context.status).toBe(200);
          const contextBody = ContextSchema.parse(context.body);
          expect(contextBody.source).toBe('worker');
          expect(validateRequest(contextBody.request), `tab ${run.index} /context`).toEqual([]);
          const local = buildRequest({ chunks, ...tabRequestOptions(tab.config, WORKER_DEFAULTS) });
          expect(validateRequest(local), `tab ${run.index} buildRequest`).toEqual([]);
          expect((contextBody.request as { messages: unknown }).messages).toEqual(local.messages);

          // 5. streams: no violations; the steady and the finally resumed clients have every seq
          // once; every turn that started is done, with a contract reason.
          for (const [name, ledger] of [
            ['steady', run.steady],
            ['flaky', run.flaky],
          ] as const) {
            expect(ledger.violations, `tab ${run.index} ${name} client`).toEqual([]);
            expect(
              ledger.seals.map((chunk) => chunk.seq),
              `tab ${run.index} ${name} seqs`,
            ).toEqual(chunks.map((chunk) => chunk.seq));
            expect(ledger.seals, `tab ${run.index} ${name} chunks`).toEqual(chunks);
          }
          // A turn runs once, or (paused for a decision) once more per pause: each run starts
          // and ends, and every run but its last ended awaiting approval.
          const started = run.steady.turnsStarted;
          const done = run.steady.turnsDone.map((event) => event.turnId);
          expect([...done].sort(), `tab ${run.index}: turns started and done`).toEqual(
            [...started].sort(),
          );
          for (const turnId of new Set(started)) {
            const runs = run.steady.turnsDone.filter((event) => event.turnId === turnId);
            expect(
              runs.slice(0, -1).map((event) => event.reason),
              `tab ${run.index}: turn ${turnId} started again though it had ended`,
            ).toEqual(runs.slice(0, -1).map(() => 'awaiting_approval'));
            expect(runs.at(-1)?.reason, `tab ${run.index}: turn ${turnId} left waiting`).not.toBe(
              'awaiting_approval',
            );
          }
          // Every tool call has exactly one result.
          const results = new Map<string, number>();
          for (const chunk of chunks)
            if (chunk.type === 'tool_result')
              results.set(chunk.data.callId, (results.get(chunk.data.callId) ?? 0) + 1);
          for (const chunk of chunks) {
            if (chunk.type !== 'tool_call') continue;
            expect(
              results.get(chunk.data.callId),
              `tab ${run.index}: results of call ${chunk.data.callId}`,
            ).toBe(1);
          }
          totals.approvalDecisions += chunks.filter(
            (chunk) => chunk.type === 'approval_decision',
          ).length;
          totals.approvalRequests += chunks.filter(
            (chunk) => chunk.type === 'approval_request',
          ).length;
          for (const event of run.steady.turnsDone) {
            expect(TurnDoneReasonSchema.options).toContain(event.reason);
            reasons.set(event.reason, (reasons.get(event.reason) ?? 0) + 1);
          }
          for (const chunk of chunks)
            expect(started, `tab ${run.index}: chunk ${chunk.seq}'s turn`).toContain(chunk.turnId);
          totals.turns += new Set(started).size;

          // 6. usage: non-negative, cache figures reported, the sum of the turns'.
          for (const value of Object.values(tab.usage)) expect(value).toBeGreaterThanOrEqual(0);
          expect(tab.usage).toEqual({
            inputTokens: expect.any(Number),
            outputTokens: expect.any(Number),
            cacheReadInputTokens: expect.any(Number),
            cacheCreationInputTokens: expect.any(Number),
          });
          const summed = run.steady.turnsDone.reduce(
            (sum, event) => addUsage(sum, event.usage),
            emptyUsage(),
          );
          expect(tab.usage, `tab ${run.index} usage`).toEqual(summed);
          expect(run.pageProblems, `tab ${run.index} pages`).toEqual([]);
        }

        // 1. no 5xx; every 4xx in the contract's shape.
        const failures = client.exchanges.filter(
          (exchange) => exchange.status >= 500 || exchange.status === 0,
        );
        expect(failures).toEqual([]);
        for (const exchange of client.exchanges.filter((exchange) => exchange.status >= 400)) {
          expect(
            ErrorBodySchema.safeParse(exchange.body).success,
            `${exchange.method} ${exchange.path} ${JSON.stringify(exchange.body)}`,
          ).toBe(true);
        }

        // 1b. what the outage refused: 503 in the contract's shape, with Retry-After.
        for (const answer of client.unavailable) {
          expect(
            ErrorBodySchema.safeParse(answer.body).success,
            `${answer.method} ${answer.path} ${JSON.stringify(answer.body)}`,
          ).toBe(true);
          expect(
            answer.retryAfter,
            `${answer.method} ${answer.path}: no Retry-After`,
          ).not.toBeNull();
        }
        if (variant.outage) {
          expect(client.unavailable.length, 'requests the outage answered 503').toBeGreaterThan(0);
        }

        console.info(
          `${variant.title}, seed ${SEED}: ${client.exchanges.length} requests ` +
            `(${client.unavailable.length} answers 503 waited out), ${JSON.stringify(totals)}, ` +
            `reasons ${JSON.stringify(Object.fromEntries(reasons))}, drain ${drainMs} ms`,
        );
        // The run really exercised what it is about (loose floors: timings vary from run to run).
        // Through an outage the drive is mostly waiting, so only the outage's own floors apply
        // (503s waited out, asserted above) and turns that ran.
        if (variant.outage) {
          expect(totals.turns, 'turns').toBeGreaterThan(0);
        } else {
          expect(totals.interrupts, 'interrupts that joined a running turn').toBeGreaterThan(0);
          expect(totals.conflicts, '409s').toBeGreaterThan(0);
          expect(totals.thinking, 'thinking chunks').toBeGreaterThan(0);
          expect(totals.toolCalls, 'tool calls').toBeGreaterThan(0);
          expect(totals.cacheRead, 'prompt cache reads').toBeGreaterThan(0);
          expect(reasons.get('cancelled') ?? 0, 'cancelled turns').toBeGreaterThan(0);
          expect(totals.midBlockResumes, 'resumes in the middle of a block').toBeGreaterThan(0);
          expect(totals.approvalRequests, 'calls that waited for a person').toBeGreaterThan(0);
          expect(totals.approvalDecisions, 'decisions in the logs').toBeGreaterThan(0);
          expect(totals.workerRestarts, 'workers stopped and started again').toBeGreaterThan(0);
        }
      } finally {
        for (const run of runs) for (const connection of run.connections) connection.close();
      }
    }, 240_000);
  });
}

defineSoak({ title: 'soak: twenty tabs of random clients over real HTTP', tabCount: 20 });
defineSoak({
  title: 'soak: twelve tabs of random clients through a Postgres crash and restart',
  tabCount: 12,
  outage: { afterMs: 5_000, forMs: 4_000 },
});
