import { randomUUID } from 'node:crypto';
import type pg from 'pg';

/**
 * Fills a tab with `depth` assistant text chunks (seq 1..depth) generated in SQL, for depth
 * tests and benches. The rows go into the bare table and the migrated constraints are rebuilt
 * afterwards exactly as they were: several times faster than row-by-row index upkeep on a busy
 * machine. `textSql` is an SQL expression of the seq `s`, e.g. `'chunk ' || s`.
 */
export async function loadDeepTab(
  pool: pg.Pool,
  input: { tabId: string; depth: number; textSql: string },
): Promise<void> {
  const idPrefix = randomUUID().slice(0, 24);
  await pool.query(`
    BEGIN;
    ALTER TABLE chunks DROP CONSTRAINT chunks_pkey, DROP CONSTRAINT chunks_tab_id_seq_unique;
    INSERT INTO chunks (id, tab_id, seq, turn_id, step, role, type, data)
    SELECT ('${idPrefix}' || lpad(to_hex(s), 12, '0'))::uuid, '${input.tabId}', s,
      '${randomUUID()}', 0, 'assistant', 'text', jsonb_build_object('text', ${input.textSql})
    FROM generate_series(1, ${input.depth}) AS s;
    SET LOCAL maintenance_work_mem = '256MB';
    ALTER TABLE chunks ADD CONSTRAINT chunks_pkey PRIMARY KEY (id),
      ADD CONSTRAINT chunks_tab_id_seq_unique UNIQUE (tab_id, seq);
    COMMIT;
    ANALYZE chunks;
    ANALYZE tabs;
  `);
}
