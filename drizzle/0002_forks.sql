CREATE TABLE "fork_segments" (
	"tab_id" uuid NOT NULL,
	"ancestor_id" uuid NOT NULL,
	"lo" bigint NOT NULL,
	"hi" bigint NOT NULL,
	CONSTRAINT "fork_segments_tab_id_ancestor_id_pk" PRIMARY KEY("tab_id","ancestor_id")
);
--> statement-breakpoint
ALTER TABLE "tabs" ADD COLUMN "fork_of" uuid;--> statement-breakpoint
ALTER TABLE "tabs" ADD COLUMN "fork_seq" bigint;--> statement-breakpoint
ALTER TABLE "fork_segments" ADD CONSTRAINT "fork_segments_tab_id_tabs_id_fk" FOREIGN KEY ("tab_id") REFERENCES "public"."tabs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "fork_segments_ancestor_index" ON "fork_segments" USING btree ("ancestor_id");--> statement-breakpoint
ALTER TABLE "tabs" ADD CONSTRAINT "tabs_fork_of_tabs_id_fk" FOREIGN KEY ("fork_of") REFERENCES "public"."tabs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "tabs_fork_of_index" ON "tabs" USING btree ("fork_of","position");--> statement-breakpoint
-- Deletes the chunks of these tabs that nothing shows any more: the tab is gone and no fork
-- refers to it (fork_segments).
CREATE FUNCTION chunklog_collect_chunks(p_tab_ids uuid[]) RETURNS void
LANGUAGE sql
AS $$
  DELETE FROM chunks c
  WHERE c.tab_id = ANY (p_tab_ids)
    AND NOT EXISTS (SELECT 1 FROM tabs t WHERE t.id = c.tab_id)
    AND NOT EXISTS (SELECT 1 FROM fork_segments s WHERE s.ancestor_id = c.tab_id);
$$;
--> statement-breakpoint
-- Forks a tab after p_at_seq: a new tab of the same tenant and settings whose history up to
-- p_at_seq is the parent's, by reference (the parent's segments cut at p_at_seq, and the
-- parent's own range), and whose own chunks start at p_at_seq + 1 (its seq floor). Under the
-- parent's append lock, so a delete of the parent cannot collect what the fork refers to.
-- Idempotent by p_id: a tab of that id is returned as it stands. CL404: no such parent (or
-- another tenant's).
CREATE FUNCTION chunklog_fork(p_parent_id uuid, p_tenant_id text, p_at_seq bigint, p_id uuid, p_title text)
RETURNS uuid
LANGUAGE plpgsql
AS $$
DECLARE
  v_parent tabs;
  v_id uuid := coalesce(p_id, gen_random_uuid());
BEGIN
  PERFORM pg_advisory_xact_lock(chunklog_tab_lock_key(p_parent_id));
  SELECT t.* INTO v_parent FROM tabs t WHERE t.id = p_parent_id AND t.tenant_id = p_tenant_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'tab % does not exist', p_parent_id USING ERRCODE = 'CL404';
  END IF;
  IF p_at_seq > greatest(v_parent.seq_floor, coalesce(
      (SELECT c.seq FROM chunks c WHERE c.tab_id = p_parent_id ORDER BY c.seq DESC LIMIT 1), 0)) THEN
    RAISE EXCEPTION 'tab % has no seq %', p_parent_id, p_at_seq USING ERRCODE = 'CL409';
  END IF;
  INSERT INTO tabs (id, tenant_id, title, config, fork_of, fork_seq, seq_floor)
  VALUES (v_id, p_tenant_id, coalesce(p_title, v_parent.title), v_parent.config, p_parent_id,
    p_at_seq, p_at_seq)
  ON CONFLICT (id) DO NOTHING;
  IF NOT FOUND THEN
    RETURN v_id;
  END IF;
  INSERT INTO fork_segments (tab_id, ancestor_id, lo, hi)
  SELECT v_id, s.ancestor_id, s.lo, least(s.hi, p_at_seq)
  FROM fork_segments s WHERE s.tab_id = p_parent_id AND s.lo < p_at_seq
  UNION ALL
  SELECT v_id, p_parent_id, coalesce(v_parent.fork_seq, 0), p_at_seq
  WHERE p_at_seq > coalesce(v_parent.fork_seq, 0);
  RETURN v_id;
END
$$;
