-- A tab's latest compaction in one index probe, however deep the tab: the worker reads a tab's
-- log from there.
CREATE INDEX "chunks_compaction_index" ON "chunks" USING btree ("tab_id","seq") WHERE "chunks"."type" = 'compaction';
