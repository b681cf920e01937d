-- chunklog_append_batch, leaner: the same locks, tails and checks, with less work per chunk.
-- - No probe of the chunks primary key per chunk. A chunk id that is already stored (a replay,
--   or an id taken in another tab) makes the insert raise unique_violation, which rolls the
--   whole statement back; the caller then appends the batch's items one by one with
--   chunklog_append, whose answer (the stored chunk, or the typed error) each gets as if alone.
--   Replays are rare and a failed batch writes nothing, so the common batch pays nothing for them.
-- - A tab's tail from the chunks index alone while it has chunks (they always lie above its
--   seq_floor); the tabs row is read only for a tab without chunks (null: no such tab).
-- - The stored rows come back as id, seq and created_at only: the caller holds the rest.
--
-- Item i is (p_tab_ids[i], p_chunks -> i-1, p_expected_seqs[i]). A tab is left out of the
-- insert (nothing written for it, no row returned) when the tab does not exist or an item's
-- expected seq does not match; the caller appends the items whose chunks did not come back one
-- by one, in call order, after the batch committed.
DROP FUNCTION chunklog_append_batch(uuid[], jsonb, bigint[]);--> statement-breakpoint
CREATE FUNCTION chunklog_append_batch(p_tab_ids uuid[], p_chunks jsonb, p_expected_seqs bigint[])
RETURNS TABLE (id uuid, seq bigint, created_at_ms double precision)
LANGUAGE plpgsql
-- Planned once per connection: a custom plan per call (the default while the arrays' sizes
-- vary) costs about as much as running the statement.
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  -- Held until commit: per-tab commit order equals seq order. Every distinct tab's lock, in key
  -- order (unnest yields the sorted array's elements in order), in one statement; the statement
  -- below starts after it, so its snapshot sees every earlier holder's rows.
  PERFORM pg_advisory_xact_lock(k.key)
  FROM unnest(ARRAY(
    SELECT DISTINCT chunklog_tab_lock_key(i.tab_id) AS key
    FROM unnest(p_tab_ids) AS i(tab_id)
    ORDER BY key
  )) AS k(key);

  RETURN QUERY
  WITH items AS (
    SELECT i.ord::integer AS item_no, i.tab_id, p_expected_seqs[i.ord] AS expected_seq,
      p_chunks -> (i.ord::integer - 1) AS chunks
    FROM unnest(p_tab_ids) WITH ORDINALITY AS i(tab_id, ord)
  ),
  tails AS MATERIALIZED (
    SELECT d.tab_id, coalesce(
      (SELECT h.seq FROM chunks h WHERE h.tab_id = d.tab_id ORDER BY h.seq DESC LIMIT 1),
      (SELECT t.seq_floor FROM tabs t WHERE t.id = d.tab_id)) AS tail
    FROM (SELECT DISTINCT it.tab_id FROM items it) AS d
  ),
  planned AS (
    SELECT it.item_no, it.tab_id, it.expected_seq, e.ord AS pos, e.value AS chunk, tl.tail,
      tl.tail + row_number() OVER (PARTITION BY it.tab_id ORDER BY it.item_no, e.ord) AS next_seq
    FROM items it
    CROSS JOIN LATERAL jsonb_array_elements(it.chunks) WITH ORDINALITY AS e(value, ord)
    JOIN tails tl ON tl.tab_id = it.tab_id
  ),
  classified AS (
    SELECT p.*, bool_or(p.tail IS NULL
        OR (p.pos = 1 AND p.expected_seq IS NOT NULL AND p.expected_seq <> p.next_seq))
        OVER (PARTITION BY p.tab_id) AS tab_deferred
    FROM planned p
  )
  INSERT INTO chunks AS c (id, tab_id, seq, turn_id, step, role, type, data)
  SELECT (k.chunk ->> 'id')::uuid, k.tab_id, k.next_seq, (k.chunk ->> 'turnId')::uuid,
    (k.chunk ->> 'step')::integer, k.chunk ->> 'role', k.chunk ->> 'type', k.chunk -> 'data'
  FROM classified k
  WHERE NOT k.tab_deferred
  RETURNING c.id, c.seq, floor(extract(epoch FROM c.created_at) * 1000)::double precision;
END
$$;
--> statement-breakpoint
-- The common batch, as its own function: one chunk per append and no tab twice (the caller
-- checks both). Item i is (p_tab_ids[i], p_chunks -> i-1, p_expected_seqs[i]), its chunk given
-- alone rather than in an array. No windows or grouping: each row reads its own tab's tail and
-- goes in at tail + 1. An item whose tab does not exist or whose expected seq does not match is
-- left out (nothing written for it, no row returned), and the caller appends it alone with
-- chunklog_append, as the general function's deferred items are. A stored chunk id raises
-- unique_violation as in the general function, and so would two items of one tab (both at
-- tail + 1), should a caller break the rule.
CREATE FUNCTION chunklog_append_batch_distinct(p_tab_ids uuid[], p_chunks jsonb, p_expected_seqs bigint[])
RETURNS TABLE (id uuid, seq bigint, created_at_ms double precision)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  PERFORM pg_advisory_xact_lock(k.key)
  FROM unnest(ARRAY(
    SELECT chunklog_tab_lock_key(i.tab_id) AS key
    FROM unnest(p_tab_ids) AS i(tab_id)
    ORDER BY key
  )) AS k(key);

  RETURN QUERY
  INSERT INTO chunks AS c (id, tab_id, seq, turn_id, step, role, type, data)
  SELECT (x.chunk ->> 'id')::uuid, i.tab_id, tl.tail + 1, (x.chunk ->> 'turnId')::uuid,
    (x.chunk ->> 'step')::integer, x.chunk ->> 'role', x.chunk ->> 'type', x.chunk -> 'data'
  FROM unnest(p_tab_ids, p_expected_seqs) WITH ORDINALITY AS i(tab_id, expected_seq, ord)
  CROSS JOIN LATERAL (SELECT p_chunks -> (i.ord::integer - 1) AS chunk) AS x
  -- The tail from the chunks index while the tab has chunks, else its seq_floor (null: no tab).
  CROSS JOIN LATERAL (SELECT coalesce(
      (SELECT h.seq FROM chunks h WHERE h.tab_id = i.tab_id ORDER BY h.seq DESC LIMIT 1),
      (SELECT t.seq_floor FROM tabs t WHERE t.id = i.tab_id)) AS tail) AS tl
  WHERE tl.tail IS NOT NULL AND (i.expected_seq IS NULL OR i.expected_seq = tl.tail + 1)
  RETURNING c.id, c.seq, floor(extract(epoch FROM c.created_at) * 1000)::double precision;
END
$$;
