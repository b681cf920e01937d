import { z } from 'zod';
import { type BigintValue, IdSchema, parse, requireTabId } from '../input';
import type { RunStatement } from '../sql-client';

/**
 * How a new user message relates to a turn that may be running (docs/architecture.md,
 * "Messages, intake and cancel"); `compact` is no message but a request to compact the tab, run
 * as a turn of its own in its place in the inbox; `approval` is no message either but a wake-up
 * for a paused turn (decisions recorded, or a cancel of it): its text is empty.
 */
export type MessageMode = 'interrupt' | 'enqueue' | 'reject' | 'compact' | 'approval';

/** A user message accepted by the gateway and waiting for a worker to turn it into a chunk. */
export interface InboxMessage {
  tabId: string;
  /** Id of the user chunk the message becomes. */
  chunkId: string;
  text: string;
  mode: MessageMode;
  /**
   * The tab's cancel generation when the gateway accepted the message: a cancel recorded after
   * it (a higher generation) stops its turn; one recorded before never does.
   */
  cancelGeneration: number;
  /**
   * Epoch ms at which it entered the inbox. Inbox order is the intake sequence given to
   * inboxPut.
   */
  createdAt: number;
}

/** The inbox: accepted messages of each tab, waiting to be appended as user chunks. */
export interface InboxStore {
  /**
   * Stores a message; false (and no change) when its chunkId is already in the inbox or the log.
   * Without a cancelGeneration it gets the tab's current one. intakeSeq is the message's place
   * in acceptance order (the intake queue's item sequence), whatever order messages are put in.
   */
  inboxPut(
    message: Omit<InboxMessage, 'createdAt' | 'cancelGeneration'> & {
      cancelGeneration?: number;
      intakeSeq: number;
    },
  ): Promise<boolean>;
  /** Waiting messages of a tab in acceptance order: by intakeSeq. */
  inboxList(tabId: string): Promise<InboxMessage[]>;
  /** Removes messages once their chunks are appended. */
  inboxRemove(tabId: string, chunkIds: string[]): Promise<void>;
}

const maxInboxTextBytes = 1024 * 1024;

const InboxPutSchema = z
  .object({
    tabId: IdSchema,
    chunkId: IdSchema,
    text: z
      .string()
      .refine((text) => Buffer.byteLength(text, 'utf8') <= maxInboxTextBytes, 'text too large')
      .refine((text) => !text.includes('\u0000'), 'text contains a NUL character'),
    mode: z.enum(['interrupt', 'enqueue', 'reject', 'compact', 'approval']),
    cancelGeneration: z.number().int().nonnegative().optional(),
    intakeSeq: z.number().int().nonnegative(),
  })
  .strict();

interface InboxRow extends Record<string, unknown> {
  tab_id: string;
  chunk_id: string;
  text: string;
  mode: MessageMode;
  cancel_generation: BigintValue;
  created_at_ms: number;
}

export function createSqlInboxStore(run: RunStatement): InboxStore {
  return {
    async inboxPut(message) {
      const parsed = parse(InboxPutSchema, message, 'inbox message');
      // A chunkId already in the log is a message already delivered: refuse it quietly.
      // Unstamped: the generation now, so no cancel already made touches it.
      // The 0 fallback is for an unknown tab, which the foreign key then refuses as not found.
      const rows = await run(
        'inbox put',
        `INSERT INTO inbox (chunk_id, tab_id, text, mode, cancel_generation, intake_seq)
         SELECT $1, $2, $3, $4,
           coalesce($5::bigint, (SELECT cancel_generation FROM tabs WHERE id = $2::uuid), 0),
           $6::bigint
         WHERE NOT EXISTS (SELECT 1 FROM chunks WHERE id = $1)
         ON CONFLICT (chunk_id) DO NOTHING
         RETURNING chunk_id`,
        [
          parsed.chunkId,
          parsed.tabId,
          parsed.text,
          parsed.mode,
          parsed.cancelGeneration ?? null,
          parsed.intakeSeq,
        ],
      );
      return rows.length > 0;
    },

    async inboxList(tabId): Promise<InboxMessage[]> {
      const id = requireTabId(tabId);
      const rows = await run<InboxRow>(
        'inbox list',
        `SELECT tab_id, chunk_id, text, mode, cancel_generation,
           floor(extract(epoch FROM created_at) * 1000)::double precision AS created_at_ms
         FROM inbox WHERE tab_id = $1
         ORDER BY intake_seq, chunk_id`,
        [id],
      );
      return rows.map((row) => ({
        tabId: row.tab_id,
        chunkId: row.chunk_id,
        text: row.text,
        mode: row.mode,
        cancelGeneration: Number(row.cancel_generation),
        createdAt: row.created_at_ms,
      }));
    },

    async inboxRemove(tabId, chunkIds) {
      const id = requireTabId(tabId);
      const ids = parse(z.array(IdSchema).max(10_000), chunkIds, 'chunk ids');
      if (ids.length === 0) return;
      await run(
        'inbox remove',
        'DELETE FROM inbox WHERE tab_id = $1 AND chunk_id = ANY ($2::uuid[])',
        [id, ids],
      );
    },
  };
}
