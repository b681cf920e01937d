import { randomUUID } from 'node:crypto';
import {
  NotFoundError,
  type Tab,
  type TurnDoneReason,
  TurnDoneReasonSchema,
  type Usage,
  UsageSchema,
  webhookEventTypeOf,
} from '@chunklog/chunk-core';
import { z } from 'zod';
import { type TabWaiting, TabWaitingSchema } from '../approvals/approval-store';
import { type BigintValue, IdSchema, OwnerSchema, parse, requireTabId } from '../input';
import type { RunStatement } from '../sql-client';
import { type TabRow, tabColumns, tabFromRow } from '../tabs/tab-row';

/** The turn lease a worker holds on a tab while it runs a turn there. */
export interface TurnLease {
  tabId: string;
  turnId: string;
  owner: string;
  /** Epoch ms (database clock). */
  expiresAt: number;
  /** The cancel generation the turn runs under, once its holder recorded it; else null. */
  cancelGeneration: number | null;
}

export interface AcquireLeaseResult {
  acquired: boolean;
  /** When the lease was taken from an expired holder: the turn that holder was running. */
  takenOver?: { turnId: string; owner: string };
  tab: Tab;
  /** The tab's paused turn, whole (see ApprovalStore.getWaiting), read with the tab. */
  waiting: TabWaiting | null;
}

/**
 * Turn leases: which worker runs a tab's turn, until when (database clock), and which tabs
 * need a worker.
 */
export interface LeaseStore {
  /** Takes the tab's turn lease when the tab is idle or its lease expired. */
  acquireLease(
    tabId: string,
    input: { owner: string; turnId: string; leaseMs: number },
  ): Promise<AcquireLeaseResult>;
  /** Extends a held lease; false when it is no longer this owner's. */
  renewLease(tabId: string, input: { owner: string; leaseMs: number }): Promise<boolean>;
  /**
   * Ends the turn: status idle, usage added to the tab's total. With `ended`, the turn's end
   * event goes into the webhook outbox for every endpoint of the tenant that subscribes to it,
   * in the same statement, so the end and its deliveries commit together. False when not held
   * (then nothing is written).
   */
  releaseLease(
    tabId: string,
    input: { owner: string; usage: Usage; ended?: { turnId: string; reason: TurnDoneReason } },
  ): Promise<boolean>;
  /**
   * Tabs whose lease expired, that are idle with inbox messages waiting (a paused turn's tab
   * only for what wakes it: a decision or an interrupting message; the others wait behind the
   * decision), or whose paused
   * turn expired.
   */
  tabsNeedingWork(limit: number): Promise<string[]>;
  /** The lease currently on a tab, if any (expired or not). */
  getLease(tabId: string): Promise<TurnLease | null>;
  /**
   * Records the cancel generation the holder's turn runs under (kept through a takeover, cleared
   * on release); false when the lease is not this owner's.
   */
  setTurnCancelGeneration(
    tabId: string,
    input: { owner: string; cancelGeneration: number },
  ): Promise<boolean>;
}

const LeaseInputSchema = z.object({
  owner: OwnerSchema,
  turnId: IdSchema,
  leaseMs: z.number().int().min(1).max(86_400_000),
});
const RenewInputSchema = LeaseInputSchema.omit({ turnId: true });
const ReleaseInputSchema = z.object({
  owner: OwnerSchema,
  usage: UsageSchema,
  ended: z.object({ turnId: IdSchema, reason: TurnDoneReasonSchema }).optional(),
});
const TurnCancelGenerationSchema = z.object({
  owner: OwnerSchema,
  cancelGeneration: z.number().int().nonnegative(),
});

interface LeaseRow extends Record<string, unknown> {
  active_turn_id: string | null;
  lease_owner: string | null;
  lease_expires_at_ms: number | null;
  turn_cancel_generation: BigintValue | null;
}

/** The lease columns live on the tab row; acquireLease returns that row as it stands after. */
export function createSqlLeaseStore(run: RunStatement): LeaseStore {
  return {
    async acquireLease(tabId, input) {
      const id = requireTabId(tabId);
      const { owner, turnId, leaseMs } = parse(LeaseInputSchema, input, 'lease');
      const rows = await run<
        TabRow & {
          acquired: boolean;
          taken_over: boolean;
          previous_turn_id: string | null;
          previous_owner: string | null;
        }
      >(
        'acquire lease',
        `SELECT l.acquired, l.taken_over, l.previous_turn_id, l.previous_owner, ${tabColumns}
         FROM chunklog_acquire_lease($1, $2, $3, $4) l, LATERAL (SELECT (l.tab).*) t`,
        [id, owner, turnId, leaseMs],
      );
      const result = rows[0];
      if (result === undefined) throw new NotFoundError(`tab ${id} not found`);
      const tab = tabFromRow(result);
      const waiting = result.waiting === null ? null : TabWaitingSchema.parse(result.waiting);
      const takenOver =
        result.taken_over && result.previous_turn_id !== null && result.previous_owner !== null
          ? { turnId: result.previous_turn_id, owner: result.previous_owner }
          : undefined;
      return takenOver === undefined
        ? { acquired: result.acquired, tab, waiting }
        : { acquired: result.acquired, takenOver, tab, waiting };
    },

    async renewLease(tabId, input) {
      const id = requireTabId(tabId);
      const { owner, leaseMs } = parse(RenewInputSchema, input, 'lease renewal');
      // Renewal after expiry is allowed as long as nobody took the lease over: the owner
      // still holds the tab, and acquireLease's row lock decides any race with a taker.
      const rows = await run(
        'renew lease',
        `UPDATE tabs SET lease_expires_at = now() + $3 * interval '1 millisecond'
         WHERE id = $1 AND status = 'running' AND lease_owner = $2 RETURNING id`,
        [id, owner, leaseMs],
      );
      return rows.length > 0;
    },

    async releaseLease(tabId, input) {
      const id = requireTabId(tabId);
      const { owner, usage, ended } = parse(ReleaseInputSchema, input, 'lease release');
      const eventType = ended === undefined ? null : webhookEventTypeOf(ended.reason);
      const data =
        ended === undefined
          ? null
          : { tabId: id, turnId: ended.turnId, reason: ended.reason, usage };
      // One statement, so one transaction: the outbox rows exist exactly when the release
      // committed. Without endpoints for the event (or without `ended`) the insert is a single
      // probe of the endpoints index; lastSeq is read only for rows it writes.
      const rows = await run<{ released: boolean }>(
        'release lease',
        `WITH released AS (
           UPDATE tabs SET status = 'idle', active_turn_id = NULL, lease_owner = NULL,
             lease_expires_at = NULL, turn_cancel_generation = NULL, updated_at = now(),
             usage_input_tokens = usage_input_tokens + $3,
             usage_output_tokens = usage_output_tokens + $4,
             usage_cache_read_input_tokens = usage_cache_read_input_tokens + $5,
             usage_cache_creation_input_tokens = usage_cache_creation_input_tokens + $6
           WHERE id = $1 AND status = 'running' AND lease_owner = $2
           RETURNING id, tenant_id, seq_floor
         ), queued AS (
           INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload)
           SELECT e.id, $7::uuid, $8::text, jsonb_build_object(
             'type', $8::text,
             'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'data', $9::jsonb || jsonb_build_object('lastSeq', greatest(r.seq_floor, coalesce(
               (SELECT c.seq FROM chunks c WHERE c.tab_id = r.id ORDER BY c.seq DESC LIMIT 1), 0))))
           FROM released r
           JOIN webhook_endpoints e ON e.tenant_id = r.tenant_id AND $8::text = ANY (e.event_types)
           RETURNING 1
         )
         SELECT EXISTS (SELECT 1 FROM released) AS released, (SELECT count(*) FROM queued) AS queued`,
        [
          id,
          owner,
          usage.inputTokens,
          usage.outputTokens,
          usage.cacheReadInputTokens,
          usage.cacheCreationInputTokens,
          randomUUID(),
          eventType,
          data === null ? null : JSON.stringify(data),
        ],
      );
      return rows[0]?.released === true;
    },

    async tabsNeedingWork(limit) {
      const bounded = parse(z.number().int().min(1).max(10_000), limit, 'limit');
      const rows = await run<{ id: string }>(
        'tabs needing work',
        `(SELECT t.id FROM tabs t WHERE t.status = 'running' AND t.lease_expires_at <= now()
          ORDER BY t.lease_expires_at LIMIT $1)
         UNION
         (SELECT DISTINCT i.tab_id FROM inbox i JOIN tabs t ON t.id = i.tab_id
          WHERE t.status = 'idle' AND (t.waiting IS NULL OR i.mode IN ('approval', 'interrupt')) LIMIT $1)
         UNION
         (SELECT t.id FROM tabs t WHERE t.waiting_expires_at <= now() AND t.status = 'idle'
          ORDER BY t.waiting_expires_at LIMIT $1)
         LIMIT $1`,
        [bounded],
      );
      return rows.map((row) => row.id);
    },

    async getLease(tabId): Promise<TurnLease | null> {
      const id = requireTabId(tabId);
      const rows = await run<LeaseRow>(
        'get lease',
        `SELECT active_turn_id, lease_owner, turn_cancel_generation,
           floor(extract(epoch FROM lease_expires_at) * 1000)::double precision AS lease_expires_at_ms
         FROM tabs WHERE id = $1`,
        [id],
      );
      const row = rows[0];
      if (row === undefined) throw new NotFoundError(`tab ${id} not found`);
      if (
        row.lease_owner === null ||
        row.active_turn_id === null ||
        row.lease_expires_at_ms === null
      ) {
        return null;
      }
      return {
        tabId: id,
        turnId: row.active_turn_id,
        owner: row.lease_owner,
        expiresAt: row.lease_expires_at_ms,
        cancelGeneration:
          row.turn_cancel_generation === null ? null : Number(row.turn_cancel_generation),
      };
    },

    async setTurnCancelGeneration(tabId, input) {
      const id = requireTabId(tabId);
      const { owner, cancelGeneration } = parse(
        TurnCancelGenerationSchema,
        input,
        'turn cancel generation',
      );
      const rows = await run(
        'set turn cancel generation',
        `UPDATE tabs SET turn_cancel_generation = $3
         WHERE id = $1 AND status = 'running' AND lease_owner = $2 RETURNING id`,
        [id, owner, cancelGeneration],
      );
      return rows.length > 0;
    },
  };
}
