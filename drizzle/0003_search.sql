-- Full-text search over the log. The searchable text of a chunk, by its type: the words of a
-- user or assistant text, of thinking, of a system note or an error; a tool call's name and
-- input; a tool result's name, result and shell output. Compactions (a summary of chunks that
-- are themselves searchable) and approvals (a call's input, already on its tool_call) are left
-- out. JSON inputs and results read as their JSON text, with escaped newlines and tabs turned
-- into spaces so the words beside them stay words. Capped at 100,000 characters: a tsvector
-- holds at most 1 MB, and an append must never fail on its search entry.
CREATE FUNCTION chunklog_search_text(p_type text, p_data jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT left(coalesce(CASE p_type
    WHEN 'text' THEN p_data ->> 'text'
    WHEN 'thinking' THEN p_data ->> 'text'
    WHEN 'system' THEN p_data ->> 'text'
    WHEN 'error' THEN p_data ->> 'message'
    WHEN 'tool_call' THEN concat_ws(' ', p_data ->> 'name',
      regexp_replace((p_data -> 'arguments')::text, '\\[nrt]', ' ', 'g'))
    WHEN 'tool_result' THEN concat_ws(' ', p_data ->> 'name',
      CASE jsonb_typeof(p_data -> 'result')
        WHEN 'string' THEN p_data ->> 'result'
        ELSE regexp_replace((p_data -> 'result')::text, '\\[nrt]', ' ', 'g')
      END,
      p_data ->> 'shellOutput')
  END, ''), 100000)
$$;
--> statement-breakpoint
-- IF NOT EXISTS: a deployment with a large log builds the index ahead of this migration with
-- CREATE INDEX CONCURRENTLY (docs/architecture.md, "Search"), which never blocks appends; a
-- plain build here blocks them while it runs.
CREATE INDEX IF NOT EXISTS "chunks_search_simple_index" ON "chunks" USING gin (to_tsvector('simple'::regconfig, chunklog_search_text("type", "data")));
