-- Appends read the tail from the chunks index instead of keeping counters on the tab row: an
-- append then writes only its chunk rows (no tab-row update, no foreign-key row lock), which
-- roughly halves the write work of the common single-chunk append. Chunks leave a tab only
-- all at once (clear, delete), so a tab's seqs always run gap-free from its lowest to its
-- highest stored seq, and its total is highest - lowest + 1: two index probes, never a count.

-- The advisory-lock key of a tab. A collision between two tabs only serializes their appends;
-- it never breaks the per-tab invariants.
CREATE FUNCTION chunklog_tab_lock_key(p_tab_id uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended(p_tab_id::text, 7262) $$;
--> statement-breakpoint
-- chunklog_append with a fast path for the common case, one chunk appended: after the lock,
-- a single INSERT ... SELECT reads the tail, checks the expected seq and writes the row, where
-- the general path spends a statement on the tail and another on the insert. When the fast
-- insert writes nothing (unknown tab, stale expected seq, a replayed or foreign id), nothing has
-- changed and the general path below decides and explains, under the same lock.
CREATE FUNCTION chunklog_append(p_tab_id uuid, p_chunks jsonb, p_expected_seq bigint)
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
      -- Not found: the clashing row was in another tab, whose clear or delete (under that
      -- tab's lock, not ours) removed it in between. Either way the id is not this tab's.
      IF NOT FOUND OR v_tab_id <> p_tab_id THEN
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
CREATE FUNCTION chunklog_clear(p_tab_id uuid) RETURNS boolean
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
--> statement-breakpoint
-- Takes a tab's turn lease when the tab is idle or its lease expired, on the database clock.
-- The same owner asking again for the same turn renews it (a redelivered command). Returns the
-- previous holder so the caller can tell a takeover from a fresh start. CL404 unknown tab.
CREATE FUNCTION chunklog_acquire_lease(p_tab_id uuid, p_owner text, p_turn_id uuid, p_lease_ms bigint)
RETURNS TABLE (acquired boolean, taken_over boolean, previous_turn_id uuid, previous_owner text)
LANGUAGE plpgsql
AS $$
DECLARE
  v_status text;
  v_turn_id uuid;
  v_owner text;
  v_expires_at timestamptz;
  v_own boolean;
BEGIN
  SELECT t.status, t.active_turn_id, t.lease_owner, t.lease_expires_at
  INTO v_status, v_turn_id, v_owner, v_expires_at
  FROM tabs t
  WHERE t.id = p_tab_id
  FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'tab % does not exist', p_tab_id USING ERRCODE = 'CL404';
  END IF;

  v_own := v_owner IS NOT DISTINCT FROM p_owner AND v_turn_id IS NOT DISTINCT FROM p_turn_id;
  IF v_status = 'running' AND v_expires_at > now() AND NOT v_own THEN
    RETURN QUERY SELECT false, false, v_turn_id, v_owner;
    RETURN;
  END IF;

  UPDATE tabs
  SET status = 'running',
    active_turn_id = p_turn_id,
    lease_owner = p_owner,
    lease_expires_at = now() + p_lease_ms * interval '1 millisecond',
    updated_at = now()
  WHERE tabs.id = p_tab_id;

  RETURN QUERY SELECT true, v_status = 'running' AND NOT v_own, v_turn_id, v_owner;
END
$$;
