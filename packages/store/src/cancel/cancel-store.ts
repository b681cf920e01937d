import { NotFoundError } from '@chunklog/chunk-core';
import { type BigintValue, requireTabId } from '../input';
import type { RunStatement } from '../sql-client';

/**
 * Cancels: each tab counts the cancels it has had (its cancel generation). A message is stamped
 * with the generation it was accepted under, and a turn stops once the generation rises above
 * its message's stamp.
 */
export interface CancelStore {
  /**
   * Records a cancel of everything accepted on the tab so far: raises the tab's cancel
   * generation and returns it. Throws NotFoundError when absent or (with tenantId) another
   * tenant's.
   */
  requestCancel(tabId: string, options?: { tenantId?: string }): Promise<number>;
  /** The tab's cancel generation (how many cancels it has had); NotFoundError as getTab. */
  cancelGeneration(tabId: string, options?: { tenantId?: string }): Promise<number>;
}

export function createSqlCancelStore(run: RunStatement): CancelStore {
  return {
    async requestCancel(tabId, options) {
      const id = requireTabId(tabId);
      const rows = await run<{ cancel_generation: BigintValue }>(
        'request cancel',
        `UPDATE tabs SET cancel_generation = cancel_generation + 1
         WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2) RETURNING cancel_generation`,
        [id, options?.tenantId ?? null],
      );
      const row = rows[0];
      if (row === undefined) throw new NotFoundError(`tab ${id} not found`);
      return Number(row.cancel_generation);
    },

    async cancelGeneration(tabId, options) {
      const id = requireTabId(tabId);
      const rows = await run<{ cancel_generation: BigintValue }>(
        'cancel generation',
        `SELECT cancel_generation FROM tabs WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)`,
        [id, options?.tenantId ?? null],
        'chunklog_cancel_generation',
      );
      const row = rows[0];
      if (row === undefined) throw new NotFoundError(`tab ${id} not found`);
      return Number(row.cancel_generation);
    },
  };
}
