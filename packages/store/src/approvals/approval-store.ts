import {
  type ApprovalVerdict,
  ApprovalVerdictSchema,
  NotFoundError,
  WaitingCallSchema,
} from '@chunklog/chunk-core';
import { z } from 'zod';
import { IdSchema, noNul, OwnerSchema, parse, requireTabId, TenantIdSchema } from '../input';
import type { RunStatement } from '../sql-client';

/** A call waiting for a decision, with the tool's input schema an edited input is checked against. */
export const StoredWaitingCallSchema = WaitingCallSchema.extend({
  inputSchema: z.record(z.string(), z.unknown()).optional(),
});
export type StoredWaitingCall = z.infer<typeof StoredWaitingCallSchema>;

/** A turn paused for decisions: what its holder records before it lets the tab go. */
export const TabWaitingSchema = z.object({
  turnId: IdSchema,
  /** The step whose calls wait; the turn resumes after it. */
  step: z.number().int().nonnegative(),
  /** The cancel stamp the turn ran under: a cancel above it denies the waiting calls. */
  cancelGeneration: z.number().int().nonnegative(),
  calls: z.array(StoredWaitingCallSchema).min(1),
  /** Epoch ms (database clock) after which undecided calls are denied; null: never. */
  expiresAt: z.number().int().nonnegative().nullable(),
});
export type TabWaiting = z.infer<typeof TabWaitingSchema>;

/** A decision on a waiting call, as recorded (and as a replay or a 409 shows it). */
export interface ApprovalDecisionRecord {
  callId: string;
  turnId: string;
  /** The id of the `approval_decision` chunk the resuming worker appends. */
  chunkId: string;
  decision: ApprovalVerdict;
  input?: Record<string, unknown>;
  reason?: string;
  decidedBy: string;
  /** Epoch ms. */
  decidedAt: number;
}

const NewDecisionSchema = z.object({
  callId: z.string().min(1).max(200),
  turnId: IdSchema,
  chunkId: IdSchema,
  decision: ApprovalVerdictSchema,
  input: z.record(z.string(), z.unknown()).refine(noNul, 'input must not contain NUL').optional(),
  reason: z.string().max(10_000).refine(noNul, 'reason must not contain NUL').optional(),
  decidedBy: z.string().min(1).max(200),
});
export type NewApprovalDecision = z.infer<typeof NewDecisionSchema>;

/** Tool calls that wait for a person: the paused turn, and the decisions on its calls. */
export interface ApprovalStore {
  /** The tab's paused turn; null when none waits. Throws NotFoundError (also another tenant's). */
  getWaiting(tabId: string, options?: { tenantId?: string }): Promise<TabWaiting | null>;
  /**
   * The holder records its turn as paused (or, with null, as resumed); false when the lease is
   * not this owner's (nothing written).
   */
  setWaiting(tabId: string, input: { owner: string; waiting: TabWaiting | null }): Promise<boolean>;
  /**
   * Records decisions, all or none: when a call has a decision already, nothing is stored and
   * the calls' earlier decisions come back as `conflicts`.
   */
  recordDecisions(
    tabId: string,
    decisions: NewApprovalDecision[],
  ): Promise<{ conflicts: ApprovalDecisionRecord[] }>;
  /** The decisions recorded for these calls of the tab. */
  decisionsFor(tabId: string, callIds: readonly string[]): Promise<ApprovalDecisionRecord[]>;
}

interface DecisionRow extends Record<string, unknown> {
  call_id: string;
  turn_id: string;
  chunk_id: string;
  decision: ApprovalVerdict;
  input: Record<string, unknown> | null;
  reason: string | null;
  decided_by: string;
  decided_at_ms: number;
}

const decisionColumns = `d.call_id, d.turn_id, d.chunk_id, d.decision, d.input, d.reason, d.decided_by,
  floor(extract(epoch FROM d.decided_at) * 1000)::double precision AS decided_at_ms`;

function decisionFromRow(row: DecisionRow): ApprovalDecisionRecord {
  return {
    callId: row.call_id,
    turnId: row.turn_id,
    chunkId: row.chunk_id,
    decision: row.decision,
    ...(row.input === null ? {} : { input: row.input }),
    ...(row.reason === null ? {} : { reason: row.reason }),
    decidedBy: row.decided_by,
    decidedAt: Number(row.decided_at_ms),
  };
}

const SetWaitingSchema = z.object({ owner: OwnerSchema, waiting: TabWaitingSchema.nullable() });
const ScopeSchema = z.object({ tenantId: TenantIdSchema.optional() }).optional();

export function createSqlApprovalStore(run: RunStatement): ApprovalStore {
  return {
    async getWaiting(tabId, options) {
      const id = requireTabId(tabId);
      const scope = parse(ScopeSchema, options, 'scope');
      const rows = await run<{ waiting: unknown }>(
        'get waiting',
        'SELECT waiting FROM tabs WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)',
        [id, scope?.tenantId ?? null],
      );
      const row = rows[0];
      if (row === undefined) throw new NotFoundError(`tab ${id} not found`);
      return row.waiting === null ? null : TabWaitingSchema.parse(row.waiting);
    },

    async setWaiting(tabId, input) {
      const id = requireTabId(tabId);
      const { owner, waiting } = parse(SetWaitingSchema, input, 'waiting turn');
      const rows = await run(
        'set waiting',
        `UPDATE tabs SET waiting = $3::jsonb, updated_at = now(),
           waiting_expires_at = CASE WHEN $4::double precision IS NULL THEN NULL
             ELSE to_timestamp($4::double precision / 1000) END
         WHERE id = $1 AND status = 'running' AND lease_owner = $2 RETURNING id`,
        [id, owner, waiting === null ? null : JSON.stringify(waiting), waiting?.expiresAt ?? null],
      );
      return rows.length > 0;
    },

    async recordDecisions(tabId, decisions) {
      const id = requireTabId(tabId);
      const parsed = parse(z.array(NewDecisionSchema).min(1).max(128), decisions, 'decisions');
      // One statement: the insert runs only when none of the calls has a decision yet.
      const rows = await run<DecisionRow & { stored: boolean }>(
        'record decisions',
        `WITH incoming AS (
           SELECT * FROM jsonb_to_recordset($2::jsonb) AS x(call_id text, turn_id uuid,
             chunk_id uuid, decision text, input jsonb, reason text, decided_by text)
         ), taken AS (
           SELECT d.* FROM approval_decisions d JOIN incoming i ON i.call_id = d.call_id
           WHERE d.tab_id = $1
         ), inserted AS (
           INSERT INTO approval_decisions
             (tab_id, call_id, turn_id, chunk_id, decision, input, reason, decided_by)
           SELECT $1, call_id, turn_id, chunk_id, decision, input, reason, decided_by FROM incoming
           WHERE NOT EXISTS (SELECT 1 FROM taken)
           ON CONFLICT DO NOTHING
           RETURNING call_id
         )
         SELECT false AS stored, ${decisionColumns} FROM taken d
         UNION ALL
         SELECT true AS stored, i.call_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM inserted i`,
        [
          id,
          JSON.stringify(
            parsed.map((decision) => ({
              call_id: decision.callId,
              turn_id: decision.turnId,
              chunk_id: decision.chunkId,
              decision: decision.decision,
              input: decision.input ?? null,
              reason: decision.reason ?? null,
              decided_by: decision.decidedBy,
            })),
          ),
        ],
      );
      const conflicts = rows.filter((row) => !row.stored).map(decisionFromRow);
      const stored = new Set(rows.filter((row) => row.stored).map((row) => row.call_id));
      if (conflicts.length === 0 && stored.size < parsed.length) {
        // Another request decided a call between this one's read and its insert.
        const lost = parsed.map((d) => d.callId).filter((callId) => !stored.has(callId));
        return { conflicts: await this.decisionsFor(id, lost) };
      }
      return { conflicts };
    },

    async decisionsFor(tabId, callIds) {
      const id = requireTabId(tabId);
      if (callIds.length === 0) return [];
      const rows = await run<DecisionRow>(
        'decisions for calls',
        `SELECT ${decisionColumns} FROM approval_decisions d
         WHERE d.tab_id = $1 AND d.call_id = ANY($2::text[])`,
        [id, [...callIds]],
      );
      return rows.map(decisionFromRow);
    },
  };
}
