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
CREATE TABLE "inbox" (
	"chunk_id" uuid PRIMARY KEY NOT NULL,
	"tab_id" uuid NOT NULL,
	"text" text NOT NULL,
	"mode" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "inbox_mode_check" CHECK ("inbox"."mode" in ('interrupt', 'enqueue', 'reject'))
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
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbox" ADD CONSTRAINT "inbox_tab_id_tabs_id_fk" FOREIGN KEY ("tab_id") REFERENCES "public"."tabs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tabs" ADD CONSTRAINT "tabs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tabs" ADD CONSTRAINT "tabs_parent_tab_id_tabs_id_fk" FOREIGN KEY ("parent_tab_id") REFERENCES "public"."tabs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_tenant_id_index" ON "api_keys" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "inbox_tab_order_index" ON "inbox" USING btree ("tab_id","created_at","chunk_id");--> statement-breakpoint
CREATE INDEX "tabs_tenant_position_index" ON "tabs" USING btree ("tenant_id","position" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "tabs_running_lease_index" ON "tabs" USING btree ("lease_expires_at") WHERE "tabs"."status" = 'running';--> statement-breakpoint
CREATE INDEX "tabs_parent_tab_id_index" ON "tabs" USING btree ("parent_tab_id");