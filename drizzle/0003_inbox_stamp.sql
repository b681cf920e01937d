-- A message stored without a cancel generation gets the tab's generation as it stands, as the
-- store's inboxPut gives an unstamped message. Only a worker of the previous release, still
-- taking messages in during a rolling deploy, inserts without one: the old default 0 would put
-- its message below every cancel the tab ever had, and its turn would be cancelled unanswered.
-- A BEFORE trigger runs before the NOT NULL check, so the column keeps NOT NULL.
ALTER TABLE "inbox" ALTER COLUMN "cancel_generation" DROP DEFAULT;--> statement-breakpoint
CREATE FUNCTION chunklog_inbox_stamp() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  IF NEW.cancel_generation IS NULL THEN
    -- 0 for an unknown tab: the foreign key then refuses the row, as before.
    NEW.cancel_generation := coalesce(
      (SELECT t.cancel_generation FROM tabs t WHERE t.id = NEW.tab_id),
      0
    );
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER chunklog_inbox_stamp BEFORE INSERT ON "inbox"
FOR EACH ROW EXECUTE FUNCTION chunklog_inbox_stamp();
