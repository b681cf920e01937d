-- An inbox item may ask to compact the tab (POST /v1/tabs/:tabId/compact): mode 'compact', run
-- as a turn of its own in its place in the inbox.
ALTER TABLE "inbox" DROP CONSTRAINT "inbox_mode_check";--> statement-breakpoint
ALTER TABLE "inbox" ADD CONSTRAINT "inbox_mode_check" CHECK ("inbox"."mode" in ('interrupt', 'enqueue', 'reject', 'compact'));
