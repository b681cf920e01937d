ALTER TABLE "inbox" ADD COLUMN "cancel_generation" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "tabs" ADD COLUMN "cancel_generation" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "tabs" ADD COLUMN "turn_cancel_generation" bigint;