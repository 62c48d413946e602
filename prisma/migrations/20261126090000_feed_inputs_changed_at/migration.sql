-- What a feed itself shows (its options: view, days, merge, summary, a team's mode and minimum; and its event
-- type) moves its Last-Modified like a change of its data does: a client that revalidates with
-- If-Modified-Since alone kept the old view for good. src/feeds/serve/feed-inputs.ts declares these columns
-- (FEED_ROW_INPUTS); test/store/feed-inputs-drift.test.ts fails when the trigger below drifts from it.
ALTER TABLE "feed" ADD COLUMN "inputs_changed_at" TIMESTAMPTZ(3);

-- A feed whose options changed before this migration may have a subscriber stuck on its former view, and
-- which ones cannot be told: every existing feed's Last-Modified moves once, to now (one full download each).
UPDATE "feed" SET "inputs_changed_at" = now();

-- slotfeed's own writers set the column with their own clock; any other writer (psql, a script) gets it moved
-- here. GREATEST ignores a NULL (a feed never changed) and never moves it back.
CREATE FUNCTION "slotfeed_move_feed_inputs_changed_at"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."inputs_changed_at" IS NOT DISTINCT FROM OLD."inputs_changed_at" THEN
    NEW."inputs_changed_at" := GREATEST(OLD."inputs_changed_at", now());
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER "feed_shown_columns_move_inputs_changed_at"
BEFORE UPDATE OF "options", "upstream_event_id"
ON "feed"
FOR EACH ROW
WHEN (
  OLD."options" IS DISTINCT FROM NEW."options"
  OR OLD."upstream_event_id" IS DISTINCT FROM NEW."upstream_event_id"
)
EXECUTE FUNCTION "slotfeed_move_feed_inputs_changed_at"();
