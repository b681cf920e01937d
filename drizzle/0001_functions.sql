-- The advisory-lock key of a tab. A collision between two tabs only serializes their appends;
-- it never breaks the per-tab invariants.
CREATE FUNCTION chunklog_tab_lock_key(p_tab_id uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended(p_tab_id::text, 7262) $$;
--> statement-breakpoint
-- Appends chunks to a tab in one round trip (DESIGN section 4). p_chunks is a JSON array of
-- { id, turnId, step, role, type, data }, already validated by the store. Ids already stored in
-- this tab are returned as stored and allocate nothing; the rest get contiguous seqs above the
-- tab's high-water mark. Errors: CL404 unknown tab; CL409 stale expected seq, or an id stored
-- in another tab. Rows come back in input order.
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
  v_last_seq bigint;
  v_ids uuid[];
  v_stored integer;
  v_foreign integer;
  v_fresh integer;
BEGIN
  -- Held until commit, so per-tab commit order equals seq order: a reader that has seen seq N
  -- has seen every seq below it. Every statement after this one takes a fresh snapshot and so
  -- sees the previous holder's rows.
  PERFORM pg_advisory_xact_lock(chunklog_tab_lock_key(p_tab_id));

  SELECT t.last_seq INTO v_last_seq FROM tabs t WHERE t.id = p_tab_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'tab % does not exist', p_tab_id USING ERRCODE = 'CL404';
  END IF;

  SELECT array_agg((e.value ->> 'id')::uuid ORDER BY e.ordinality) INTO v_ids
  FROM jsonb_array_elements(p_chunks) WITH ORDINALITY AS e;

  SELECT count(*), count(*) FILTER (WHERE c.tab_id <> p_tab_id) INTO v_stored, v_foreign
  FROM chunks c
  WHERE c.id = ANY (v_ids);
  IF v_foreign > 0 THEN
    RAISE EXCEPTION 'a chunk id is already stored in another tab' USING ERRCODE = 'CL409';
  END IF;

  v_fresh := coalesce(array_length(v_ids, 1), 0) - v_stored;
  IF v_fresh > 0 THEN
    -- Fencing: only a write is fenced; replaying chunks that are all stored writes nothing.
    IF p_expected_seq IS NOT NULL AND p_expected_seq <> v_last_seq + 1 THEN
      RAISE EXCEPTION 'expected seq % but the next seq of tab % is %',
        p_expected_seq, p_tab_id, v_last_seq + 1
        USING ERRCODE = 'CL409';
    END IF;

    INSERT INTO chunks (id, tab_id, seq, turn_id, step, role, type, data)
    SELECT
      (e.value ->> 'id')::uuid,
      p_tab_id,
      v_last_seq + row_number() OVER (ORDER BY e.ordinality),
      (e.value ->> 'turnId')::uuid,
      (e.value ->> 'step')::integer,
      e.value ->> 'role',
      e.value ->> 'type',
      e.value -> 'data'
    FROM jsonb_array_elements(p_chunks) WITH ORDINALITY AS e
    WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.id = (e.value ->> 'id')::uuid);

    UPDATE tabs
    SET last_seq = last_seq + v_fresh, chunk_count = chunk_count + v_fresh, updated_at = now()
    WHERE tabs.id = p_tab_id;
  END IF;

  RETURN QUERY
  SELECT c.id, c.seq, c.turn_id, c.step, c.role, c.type, c.data,
    floor(extract(epoch FROM c.created_at) * 1000)::double precision
  FROM unnest(v_ids) WITH ORDINALITY AS input(chunk_id, position)
  JOIN chunks c ON c.id = input.chunk_id
  ORDER BY input.position;
END
$$;
--> statement-breakpoint
-- Deletes a tab's chunks under the append lock, so a concurrent append cannot slip a row past
-- the count reset. last_seq stays: seq is never reused. False when the tab does not exist.
CREATE FUNCTION chunklog_clear(p_tab_id uuid) RETURNS boolean
LANGUAGE plpgsql
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(chunklog_tab_lock_key(p_tab_id));
  UPDATE tabs SET chunk_count = 0, updated_at = now() WHERE tabs.id = p_tab_id;
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
