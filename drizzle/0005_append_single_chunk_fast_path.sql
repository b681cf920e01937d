-- chunklog_append with a fast path for the common case, one chunk appended: after the lock,
-- a single INSERT ... SELECT reads the tail, checks the expected seq and writes the row, where
-- the general path spends a statement on the tail and another on the insert. When the fast
-- insert writes nothing (unknown tab, stale expected seq, a replayed or foreign id), nothing has
-- changed and the general path below decides and explains, under the same lock.
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

  IF jsonb_array_length(p_chunks) = 1 THEN
    v_chunk := p_chunks -> 0;
    INSERT INTO chunks AS c (id, tab_id, seq, turn_id, step, role, type, data)
    SELECT
      (v_chunk ->> 'id')::uuid,
      p_tab_id,
      tail.seq + 1,
      (v_chunk ->> 'turnId')::uuid,
      (v_chunk ->> 'step')::integer,
      v_chunk ->> 'role',
      v_chunk ->> 'type',
      v_chunk -> 'data'
    FROM tabs t
    CROSS JOIN LATERAL (
      SELECT greatest(
        t.seq_floor,
        coalesce(
          (SELECT h.seq FROM chunks h WHERE h.tab_id = p_tab_id ORDER BY h.seq DESC LIMIT 1),
          0
        )
      ) AS seq
    ) AS tail
    WHERE t.id = p_tab_id AND (p_expected_seq IS NULL OR p_expected_seq = tail.seq + 1)
    ON CONFLICT (id) DO NOTHING
    RETURNING c.id, c.seq, c.turn_id, c.step, c.role, c.type, c.data, c.created_at
    INTO id, seq, turn_id, step, role, type, data, v_created_at;
    IF FOUND THEN
      created_at_ms := floor(extract(epoch FROM v_created_at) * 1000)::double precision;
      RETURN NEXT;
      RETURN;
    END IF;
  END IF;

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

