CREATE TABLE "approval_decisions" (
	"tab_id" uuid NOT NULL,
	"call_id" text NOT NULL,
	"turn_id" uuid NOT NULL,
	"chunk_id" uuid NOT NULL,
	"decision" text NOT NULL,
	"input" jsonb,
	"reason" text,
	"decided_by" text NOT NULL,
	"decided_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "approval_decisions_tab_id_call_id_pk" PRIMARY KEY("tab_id","call_id"),
	CONSTRAINT "approval_decisions_decision_check" CHECK ("approval_decisions"."decision" in ('approve', 'deny'))
);
--> statement-breakpoint
ALTER TABLE "inbox" DROP CONSTRAINT "inbox_mode_check";--> statement-breakpoint
ALTER TABLE "tabs" ADD COLUMN "waiting" jsonb;--> statement-breakpoint
ALTER TABLE "tabs" ADD COLUMN "waiting_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "approval_decisions" ADD CONSTRAINT "approval_decisions_tab_id_tabs_id_fk" FOREIGN KEY ("tab_id") REFERENCES "public"."tabs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "tabs_waiting_expiry_index" ON "tabs" USING btree ("waiting_expires_at") WHERE "tabs"."waiting_expires_at" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "inbox" ADD CONSTRAINT "inbox_mode_check" CHECK ("inbox"."mode" in ('interrupt', 'enqueue', 'reject', 'compact', 'approval'));