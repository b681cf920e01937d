ALTER TABLE "chunks" DROP CONSTRAINT "chunks_tab_id_tabs_id_fk";
--> statement-breakpoint
ALTER TABLE "tabs" DROP COLUMN "last_seq";--> statement-breakpoint
ALTER TABLE "tabs" DROP COLUMN "chunk_count";