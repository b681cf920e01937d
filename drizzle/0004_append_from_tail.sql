-- Appends read the tail from the chunks index instead of keeping counters on the tab row: an
-- append then writes only its chunk rows (no tab-row update, no foreign-key row lock), which
-- roughly halves the write work of the common single-chunk append. Chunks leave a tab only
-- all at once (clear, delete), so a tab's seqs always run gap-free from its lowest to its
-- highest stored seq, and its total is highest - lowest + 1: two index probes, never a count.

-- Appends chunks in one round trip (DESIGN section 4). p_chunks is a JSON array of
-- { id, turnId, step, role, type, data }, validated by the store. Ids already stored in this tab
-- return as stored and allocate nothing; the others get contiguous seqs above the tail, in
-- input order. Errors: CL404 unknown tab; CL409 stale expected seq, or an id stored in another
-- tab. Every statement is a primary-key or index-range lookup or a single-row insert, so the
-- cached plans stay cheap however large chunks grows.
CREATE OR REPLACE FUNCTION chunklog_append(p_tab_id uuid, p_chunks jsonb, p_expected_seq bigint)
RETURNS TABLE (
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
AS $$
#variable_conflict use_column
DECLARE
  v_first_seq bigint;
  v_next_seq bigint;
  v_chunk jsonb;
  v_tab_id uuid;
  v_created_at timestamptz;
BEGIN
  -- Held until commit, so per-tab commit order equals seq order: a reader that has seen seq N
  -- has seen every seq below it. Every statement after this one takes a fresh snapshot and so
  -- sees the previous holder's rows; delete and clear take the same lock.
  PERFORM pg_advisory_xact_lock(chunklog_tab_lock_key(p_tab_id));

  -- The tail: the highest stored seq (one backward index probe), or what the last clear
  -- removed, whichever is higher.
  SELECT greatest(
    t.seq_floor,
    coalesce((SELECT c.seq FROM chunks c WHERE c.tab_id = p_tab_id ORDER BY c.seq DESC LIMIT 1), 0)
  )
  INTO v_first_seq
  FROM tabs t
  WHERE t.id = p_tab_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'tab % does not exist', p_tab_id USING ERRCODE = 'CL404';
  END IF;
  v_next_seq := v_first_seq + 1;

  FOR v_chunk IN
    SELECT e.value FROM jsonb_array_elements(p_chunks) WITH ORDINALITY AS e ORDER BY e.ordinality
  LOOP
    -- The tab lock makes v_next_seq free; only the chunk id can clash, and a clash means the
    -- chunk is already stored.
    INSERT INTO chunks AS c (id, tab_id, seq, turn_id, step, role, type, data)
    VALUES (
      (v_chunk ->> 'id')::uuid,
      p_tab_id,
      v_next_seq,
      (v_chunk ->> 'turnId')::uuid,
      (v_chunk ->> 'step')::integer,
      v_chunk ->> 'role',
      v_chunk ->> 'type',
      v_chunk -> 'data'
    )
    ON CONFLICT (id) DO NOTHING
    RETURNING c.id, c.seq, c.turn_id, c.step, c.role, c.type, c.data, c.created_at
    INTO id, seq, turn_id, step, role, type, data, v_created_at;

    IF FOUND THEN
      -- Fencing, checked at the first write; raising rolls back everything this call wrote,
      -- so a fenced writer writes nothing, while a pure replay (no write) is never fenced.
      IF v_next_seq = v_first_seq + 1 AND p_expected_seq IS NOT NULL
        AND p_expected_seq <> v_next_seq THEN
        RAISE EXCEPTION 'expected seq % but the next seq of tab % is %',
          p_expected_seq, p_tab_id, v_next_seq
          USING ERRCODE = 'CL409';
      END IF;
      v_next_seq := v_next_seq + 1;
    ELSE
      SELECT c.id, c.tab_id, c.seq, c.turn_id, c.step, c.role, c.type, c.data, c.created_at
      INTO id, v_tab_id, seq, turn_id, step, role, type, data, v_created_at
      FROM chunks c
      WHERE c.id = (v_chunk ->> 'id')::uuid;
      IF v_tab_id <> p_tab_id THEN
        RAISE EXCEPTION 'chunk % is already stored in another tab', v_chunk ->> 'id'
          USING ERRCODE = 'CL409';
      END IF;
    END IF;
    created_at_ms := floor(extract(epoch FROM v_created_at) * 1000)::double precision;
    RETURN NEXT;
  END LOOP;
END
$$;
--> statement-breakpoint
-- Deletes every chunk of a tab under the append lock; the tail seq moves into seq_floor first,
-- so seq is never reused. False when the tab does not exist.
CREATE OR REPLACE FUNCTION chunklog_clear(p_tab_id uuid) RETURNS boolean
LANGUAGE plpgsql
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(chunklog_tab_lock_key(p_tab_id));
  UPDATE tabs
  SET seq_floor = greatest(
      seq_floor,
      coalesce((SELECT c.seq FROM chunks c WHERE c.tab_id = p_tab_id ORDER BY c.seq DESC LIMIT 1), 0)
    ),
    updated_at = now()
  WHERE tabs.id = p_tab_id;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  DELETE FROM chunks WHERE chunks.tab_id = p_tab_id;
  RETURN true;
END
$$;
--> statement-breakpoint
-- Deletes a tab (of the given tenant, when one is given) and its chunks under the append lock,
-- so no append can land a chunk for a deleted tab. Inbox rows go by foreign-key cascade.
CREATE FUNCTION chunklog_delete_tab(p_tab_id uuid, p_tenant_id text) RETURNS boolean
LANGUAGE plpgsql
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(chunklog_tab_lock_key(p_tab_id));
  DELETE FROM tabs WHERE tabs.id = p_tab_id AND (p_tenant_id IS NULL OR tabs.tenant_id = p_tenant_id);
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  DELETE FROM chunks WHERE chunks.tab_id = p_tab_id;
  RETURN true;
END
$$;
