-- When a feed's label last changed (issue 41): the label is the heading of the feed's share page, whose
-- Last-Modified must move with it, or a client revalidating with If-Modified-Since alone keeps the old heading
-- (304). Not an input of the feed's own bytes (.ics), so inputs_changed_at stays as it was. Null until the
-- label first changes after this migration: the page's other change times cover what came before.
ALTER TABLE "feed" ADD COLUMN "label_changed_at" TIMESTAMPTZ(3);

-- slotfeed's own writer (the rename) sets the column with its own clock; any other writer (psql, a script)
-- gets it moved here. GREATEST ignores a NULL and never moves it back.
CREATE FUNCTION "slotfeed_move_feed_label_changed_at"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."label_changed_at" IS NOT DISTINCT FROM OLD."label_changed_at" THEN
    NEW."label_changed_at" := GREATEST(OLD."label_changed_at", now());
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER "feed_label_moves_label_changed_at"
BEFORE UPDATE OF "label"
ON "feed"
FOR EACH ROW
WHEN (OLD."label" IS DISTINCT FROM NEW."label")
EXECUTE FUNCTION "slotfeed_move_feed_label_changed_at"();
