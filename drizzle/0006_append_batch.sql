-- Group commit: the appends of many callers, to any tabs, in one statement, so they share one
-- transaction, one commit flush and one round trip. Item i is (p_tab_ids[i], p_chunks -> i-1,
-- p_expected_seqs[i]), the arguments chunklog_append takes.
--
-- Every distinct tab's append lock is taken first, in key order, so batches cannot deadlock
-- with each other, nor with chunklog_append, clear and delete (one lock each). Then one
-- statement reads each tab's tail once, gives the rows of a tab's items consecutive seqs in item
-- order and inserts them all, returning the stored rows (item null: a chunk id is in one item
-- only, the caller's batches see to that). A tab is left out of that insert (one row per item
-- returned with its item number and deferred = true, nothing written for it) when anything
-- about it is unusual: the tab does not exist, an item's expected seq does not match, a chunk
-- id is already stored. The caller then appends those items one by one with chunklog_append,
-- whose answer (a replay, a fenced writer, an unknown tab) they get exactly as if alone.
CREATE FUNCTION chunklog_append_batch(p_tab_ids uuid[], p_chunks jsonb, p_expected_seqs bigint[])
RETURNS TABLE (
  item integer,
  deferred boolean,
  id uuid,
  seq bigint,
  turn_id uuid,
  step integer,
  role text,
  type text,
  data jsonb,
  created_at_ms double precision
)
LANGUAGE plpgsql
-- Planned once per connection: a custom plan per call (the default while the arrays' sizes
-- vary) costs about as much as running the statement.
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  -- Held until commit, like chunklog_append's: per-tab commit order equals seq order. The keys
  -- are taken in the order of the sorted array (unnest yields its elements in order), all in one
  -- statement; the statement below starts after it, so its snapshot sees every earlier holder's
  -- rows.
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
  -- One probe of the tabs primary key and one backward probe of (tab_id, seq) per distinct tab
  -- (null: no such tab).
  tails AS MATERIALIZED (
    SELECT d.tab_id, (
      SELECT greatest(t.seq_floor, coalesce(
        (SELECT h.seq FROM chunks h WHERE h.tab_id = t.id ORDER BY h.seq DESC LIMIT 1), 0))
      FROM tabs t
      WHERE t.id = d.tab_id
    ) AS tail
    FROM (SELECT DISTINCT it.tab_id FROM items it) AS d
  ),
  planned AS (
    SELECT it.item_no, it.tab_id, it.expected_seq, e.ord AS pos, e.value AS chunk,
      (e.value ->> 'id')::uuid AS chunk_id, tl.tail,
      tl.tail + row_number() OVER (PARTITION BY it.tab_id ORDER BY it.item_no, e.ord) AS next_seq
    FROM items it
    CROSS JOIN LATERAL jsonb_array_elements(it.chunks) WITH ORDINALITY AS e(value, ord)
    JOIN tails tl ON tl.tab_id = it.tab_id
  ),
  checked AS (
    SELECT p.*,
      p.tail IS NULL
        OR (p.pos = 1 AND p.expected_seq IS NOT NULL AND p.expected_seq <> p.next_seq)
        OR stored.id IS NOT NULL AS unusual
    FROM planned p
    -- One probe of the primary key per chunk: as a lateral with a LIMIT, the plan cannot
    -- turn it into a hash of every stored id.
    LEFT JOIN LATERAL (SELECT x.id FROM chunks x WHERE x.id = p.chunk_id LIMIT 1) AS stored ON true
  ),
  classified AS (
    SELECT k.*, bool_or(k.unusual) OVER (PARTITION BY k.tab_id) AS tab_deferred
    FROM checked k
  ),
  inserted AS (
    INSERT INTO chunks AS c (id, tab_id, seq, turn_id, step, role, type, data)
    SELECT k.chunk_id, k.tab_id, k.next_seq, (k.chunk ->> 'turnId')::uuid,
      (k.chunk ->> 'step')::integer, k.chunk ->> 'role', k.chunk ->> 'type', k.chunk -> 'data'
    FROM classified k
    WHERE NOT k.tab_deferred
    RETURNING c.id, c.seq, c.turn_id, c.step, c.role, c.type, c.data, c.created_at
  )
  SELECT NULL::integer, false, n.id, n.seq, n.turn_id, n.step, n.role, n.type, n.data,
    floor(extract(epoch FROM n.created_at) * 1000)::double precision
  FROM inserted n
  UNION ALL
  SELECT DISTINCT k.item_no, true, NULL::uuid, NULL::bigint, NULL::uuid, NULL::integer,
    NULL::text, NULL::text, NULL::jsonb, NULL::double precision
  FROM classified k
  WHERE k.tab_deferred;
END
$$;
