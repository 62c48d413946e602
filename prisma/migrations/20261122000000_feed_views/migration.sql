-- Feed views, secret event types, event revisions, and feed versions that every writer moves.

-- Secret event types (`is_secret` upstream) are published only by a feed that names them.
ALTER TABLE "event_type" ADD COLUMN "secret" BOOLEAN NOT NULL DEFAULT false;
UPDATE "event_type" SET "secret" = true WHERE "payload"->>'is_secret' = 'true';

-- Every feed states its view. A connection's default feed (all event types, no day range, not merged) shows
-- free time from now on, under the same URL; every other feed keeps showing slots as it did.
UPDATE "feed" SET "options" = ("options" - 'merge') || '{"view": "free"}'::jsonb
WHERE "upstream_event_id" IS NULL
  AND NOT ("options" ? 'days')
  AND COALESCE("options"->>'merge', 'false') <> 'true';
UPDATE "feed" SET "options" = "options" || '{"view": "slots"}'::jsonb WHERE NOT ("options" ? 'view');

-- What each feed last published under each UID: a digest of what a subscriber sees, the SEQUENCE it went out
-- with and when it last changed (DTSTAMP, LAST-MODIFIED). A changed digest moves both.
CREATE TABLE "feed_event" (
    "feed_id" UUID NOT NULL,
    "uid" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL,
    "ends_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "feed_event_pkey" PRIMARY KEY ("feed_id","uid")
);
ALTER TABLE "feed_event" ADD CONSTRAINT "feed_event_feed_id_fkey" FOREIGN KEY ("feed_id") REFERENCES "feed"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The feed version moves whenever anything a feed shows changes, whoever writes it. slotfeed's own writers move
-- it themselves, with their own clock (and say so with the transaction-local setting
-- slotfeed.moves_feed_version = 'on'); the triggers below move it for any other writer: an operator's UPDATE
-- in psql, a script, a restore.
CREATE FUNCTION "slotfeed_move_feed_version_of_rows"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('slotfeed.moves_feed_version', true) = 'on' THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'TRUNCATE' THEN
    UPDATE "connection" SET "feed_version" = "feed_version" + 1,
                            "feed_changed_at" = GREATEST("feed_changed_at", now());
  ELSIF TG_OP = 'INSERT' THEN
    UPDATE "connection" SET "feed_version" = "feed_version" + 1,
                            "feed_changed_at" = GREATEST("feed_changed_at", now())
    WHERE "id" IN (SELECT "connection_id" FROM new_rows);
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE "connection" SET "feed_version" = "feed_version" + 1,
                            "feed_changed_at" = GREATEST("feed_changed_at", now())
    WHERE "id" IN (SELECT "connection_id" FROM old_rows);
  ELSE
    UPDATE "connection" SET "feed_version" = "feed_version" + 1,
                            "feed_changed_at" = GREATEST("feed_changed_at", now())
    WHERE "id" IN (SELECT "connection_id" FROM new_rows UNION SELECT "connection_id" FROM old_rows);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "slot_insert_moves_feed_version" AFTER INSERT ON "slot"
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_move_feed_version_of_rows"();
CREATE TRIGGER "slot_update_moves_feed_version" AFTER UPDATE ON "slot"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_move_feed_version_of_rows"();
CREATE TRIGGER "slot_delete_moves_feed_version" AFTER DELETE ON "slot"
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_move_feed_version_of_rows"();
CREATE TRIGGER "slot_truncate_moves_feed_version" AFTER TRUNCATE ON "slot"
FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_move_feed_version_of_rows"();

CREATE TRIGGER "event_type_insert_moves_feed_version" AFTER INSERT ON "event_type"
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_move_feed_version_of_rows"();
CREATE TRIGGER "event_type_update_moves_feed_version" AFTER UPDATE ON "event_type"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_move_feed_version_of_rows"();
CREATE TRIGGER "event_type_delete_moves_feed_version" AFTER DELETE ON "event_type"
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_move_feed_version_of_rows"();
CREATE TRIGGER "event_type_truncate_moves_feed_version" AFTER TRUNCATE ON "event_type"
FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_move_feed_version_of_rows"();

-- The connection's own columns that a feed shows (its name, its status in the description, its zone in the
-- window): a writer that changes one without moving the version gets the version moved here, so Last-Modified
-- (feed_changed_at) is never earlier than a change to the bytes. src/feeds/serve/feed-inputs.ts declares these
-- columns; test/feeds/feed-inputs-drift.test.ts fails when this trigger or the notice trigger drifts from it.
CREATE FUNCTION "slotfeed_move_feed_version_of_connection"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."feed_version" = OLD."feed_version" THEN
    NEW."feed_version" := OLD."feed_version" + 1;
    NEW."feed_changed_at" := GREATEST(OLD."feed_changed_at", now());
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER "connection_shown_columns_move_feed_version"
BEFORE UPDATE OF "status", "display_name", "email", "timezone"
ON "connection"
FOR EACH ROW
WHEN (
  OLD."status" IS DISTINCT FROM NEW."status"
  OR OLD."display_name" IS DISTINCT FROM NEW."display_name"
  OR OLD."email" IS DISTINCT FROM NEW."email"
  OR OLD."timezone" IS DISTINCT FROM NEW."timezone"
)
EXECUTE FUNCTION "slotfeed_move_feed_version_of_connection"();

-- The notice trigger watched last_sync_outcome, which no feed shows (a failed sync does not change a feed):
-- it now watches exactly the declared columns.
DROP TRIGGER "connection_feed_change" ON "connection";
CREATE TRIGGER "connection_feed_change"
AFTER UPDATE OF "status", "display_name", "email", "timezone", "feed_version", "feed_changed_at"
ON "connection"
FOR EACH ROW
WHEN (
  OLD."status" IS DISTINCT FROM NEW."status"
  OR OLD."display_name" IS DISTINCT FROM NEW."display_name"
  OR OLD."email" IS DISTINCT FROM NEW."email"
  OR OLD."timezone" IS DISTINCT FROM NEW."timezone"
  OR OLD."feed_version" IS DISTINCT FROM NEW."feed_version"
  OR OLD."feed_changed_at" IS DISTINCT FROM NEW."feed_changed_at"
)
EXECUTE FUNCTION "slotfeed_notify_feed_change"();
