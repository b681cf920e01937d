-- The inbox is ordered by the intake queue's sequence (the order the gateway's enqueues were
-- acknowledged), not by when a worker inserted the row: workers store messages concurrently,
-- so a message sent second could be stored first. Rows stored without one (a worker of the
-- previous release, mid-deploy) have a null intake_seq and sort first, then by created_at.
DROP INDEX "inbox_tab_order_index";--> statement-breakpoint
ALTER TABLE "inbox" ADD COLUMN "intake_seq" bigint;--> statement-breakpoint
CREATE INDEX "inbox_tab_order_index" ON "inbox" USING btree ("tab_id","intake_seq" NULLS FIRST,"created_at","chunk_id");