CREATE TABLE "api_keys" (
	"key_hash" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chunks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tab_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"turn_id" uuid NOT NULL,
	"step" integer NOT NULL,
	"role" text NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chunks_tab_id_seq_unique" UNIQUE("tab_id","seq")
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"tenant_id" text NOT NULL,
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"tab_id" uuid,
	"request_hash" text NOT NULL,
	"response_status" integer,
	"response_body" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_tenant_id_scope_key_pk" PRIMARY KEY("tenant_id","scope","key")
);
--> statement-breakpoint
CREATE TABLE "inbox" (
	"chunk_id" uuid PRIMARY KEY NOT NULL,
	"tab_id" uuid NOT NULL,
	"text" text NOT NULL,
	"mode" text NOT NULL,
	"cancel_generation" bigint NOT NULL,
	"intake_seq" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "inbox_mode_check" CHECK ("inbox"."mode" in ('interrupt', 'enqueue', 'reject', 'compact'))
);
--> statement-breakpoint
CREATE TABLE "tabs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "tabs_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tenant_id" text NOT NULL,
	"parent_tab_id" uuid,
	"title" text DEFAULT '' NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'idle' NOT NULL,
	"active_turn_id" uuid,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"seq_floor" bigint DEFAULT 0 NOT NULL,
	"cancel_generation" bigint DEFAULT 0 NOT NULL,
	"turn_cancel_generation" bigint,
	"usage_input_tokens" bigint DEFAULT 0 NOT NULL,
	"usage_output_tokens" bigint DEFAULT 0 NOT NULL,
	"usage_cache_read_input_tokens" bigint DEFAULT 0 NOT NULL,
	"usage_cache_creation_input_tokens" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tabs_status_check" CHECK ("tabs"."status" in ('idle', 'running'))
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" text PRIMARY KEY DEFAULT gen_random_uuid()::text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tenants_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"event_id" uuid NOT NULL,
	"event_type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now(),
	"last_attempt_at" timestamp with time zone,
	"last_status_code" integer,
	"last_error" text,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_deliveries_status_check" CHECK ("webhook_deliveries"."status" in ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"url" text NOT NULL,
	"event_types" text[] NOT NULL,
	"secret" text NOT NULL,
	"secret_set_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_tab_id_tabs_id_fk" FOREIGN KEY ("tab_id") REFERENCES "public"."tabs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbox" ADD CONSTRAINT "inbox_tab_id_tabs_id_fk" FOREIGN KEY ("tab_id") REFERENCES "public"."tabs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tabs" ADD CONSTRAINT "tabs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tabs" ADD CONSTRAINT "tabs_parent_tab_id_tabs_id_fk" FOREIGN KEY ("parent_tab_id") REFERENCES "public"."tabs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_tenant_id_index" ON "api_keys" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "chunks_compaction_index" ON "chunks" USING btree ("tab_id","seq") WHERE "chunks"."type" = 'compaction';--> statement-breakpoint
CREATE INDEX "idempotency_keys_tab_id_index" ON "idempotency_keys" USING btree ("tab_id");--> statement-breakpoint
CREATE INDEX "inbox_tab_order_index" ON "inbox" USING btree ("tab_id","intake_seq","chunk_id");--> statement-breakpoint
CREATE INDEX "tabs_tenant_position_index" ON "tabs" USING btree ("tenant_id","position" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "tabs_running_lease_index" ON "tabs" USING btree ("lease_expires_at") WHERE "tabs"."status" = 'running';--> statement-breakpoint
CREATE INDEX "tabs_parent_tab_id_index" ON "tabs" USING btree ("parent_tab_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_index" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_index" ON "webhook_deliveries" USING btree ("endpoint_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhook_deliveries_done_index" ON "webhook_deliveries" USING btree ("created_at") WHERE "webhook_deliveries"."status" <> 'pending';--> statement-breakpoint
CREATE INDEX "webhook_endpoints_tenant_id_index" ON "webhook_endpoints" USING btree ("tenant_id","created_at");
--> statement-breakpoint
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
-- Appends chunks to one tab under its advisory lock. The common case, one chunk, takes a fast
-- path of three plain statements: the tail from the chunks index alone while the tab has
-- chunks (the tabs row is read only for an empty tab), the expected-seq check, and
-- INSERT ... VALUES. When it writes nothing (unknown tab, stale expected seq, a replayed or
-- foreign id), nothing has changed and the general path below decides and explains, under the
-- same lock.
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
    -- A tab's stored chunks always lie above its seq_floor (a clear removes them all), so
    -- while it has any, the newest one is the tail and the tabs row need not be read at all.
    SELECT h.seq INTO v_first_seq FROM chunks h WHERE h.tab_id = p_tab_id ORDER BY h.seq DESC LIMIT 1;
    IF NOT FOUND THEN
      SELECT t.seq_floor INTO v_first_seq FROM tabs t WHERE t.id = p_tab_id;
    END IF;
    -- Unknown tab (no row above) or a fenced writer: the general path raises.
    IF v_first_seq IS NOT NULL AND (p_expected_seq IS NULL OR p_expected_seq = v_first_seq + 1) THEN
      v_chunk := p_chunks -> 0;
      INSERT INTO chunks AS c (id, tab_id, seq, turn_id, step, role, type, data)
      VALUES (
        (v_chunk ->> 'id')::uuid,
        p_tab_id,
        v_first_seq + 1,
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
        created_at_ms := floor(extract(epoch FROM v_created_at) * 1000)::double precision;
        RETURN NEXT;
        RETURN;
      END IF;
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
-- Appends a batch of chunks, of one tab or many, in one statement (the group commit's): each
-- tab under its advisory lock, in tab order. Per chunk:
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
-- so no append can land a chunk for a deleted tab. Inbox rows go by foreign-key cascade. Chunks
-- a fork refers to stay until no fork does (chunklog_collect_chunks), and a fork's deletion
-- collects those of its deleted ancestors that nothing refers to any more.
CREATE FUNCTION chunklog_delete_tab(p_tab_id uuid, p_tenant_id text) RETURNS boolean
LANGUAGE plpgsql
AS $$
DECLARE
  v_ancestors uuid[];
BEGIN
  PERFORM pg_advisory_xact_lock(chunklog_tab_lock_key(p_tab_id));
  SELECT coalesce(array_agg(s.ancestor_id), '{}') INTO v_ancestors
  FROM fork_segments s WHERE s.tab_id = p_tab_id;
  DELETE FROM tabs WHERE tabs.id = p_tab_id AND (p_tenant_id IS NULL OR tabs.tenant_id = p_tenant_id);
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM chunklog_collect_chunks(array_append(v_ancestors, p_tab_id));
  RETURN true;
END
$$;
--> statement-breakpoint
-- Takes a tab's turn lease when the tab is idle or its lease expired, on the database clock.
-- The same owner asking again for the same turn renews it (a redelivered command). Returns the
-- previous holder so the caller can tell a takeover from a fresh start, and the tab's row as it
-- stands after the call, so taking a lease costs one round trip. CL404 unknown tab.
CREATE FUNCTION chunklog_acquire_lease(p_tab_id uuid, p_owner text, p_turn_id uuid, p_lease_ms bigint)
RETURNS TABLE (acquired boolean, taken_over boolean, previous_turn_id uuid, previous_owner text, tab tabs)
LANGUAGE plpgsql
AS $$
DECLARE
  v_tab tabs;
  v_own boolean;
BEGIN
  SELECT t.* INTO v_tab FROM tabs t WHERE t.id = p_tab_id FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'tab % does not exist', p_tab_id USING ERRCODE = 'CL404';
  END IF;

  v_own := v_tab.lease_owner IS NOT DISTINCT FROM p_owner
    AND v_tab.active_turn_id IS NOT DISTINCT FROM p_turn_id;
  IF v_tab.status = 'running' AND v_tab.lease_expires_at > now() AND NOT v_own THEN
    RETURN QUERY SELECT false, false, v_tab.active_turn_id, v_tab.lease_owner, v_tab;
    RETURN;
  END IF;

  RETURN QUERY
  UPDATE tabs
  SET status = 'running',
    active_turn_id = p_turn_id,
    lease_owner = p_owner,
    lease_expires_at = now() + p_lease_ms * interval '1 millisecond',
    updated_at = now()
  WHERE tabs.id = p_tab_id
  RETURNING true, v_tab.status = 'running' AND NOT v_own, v_tab.active_turn_id, v_tab.lease_owner,
    tabs;
END
$$;
