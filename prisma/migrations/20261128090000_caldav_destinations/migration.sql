-- CalDAV destinations (issue 29): a feed's content written into a person's own CalDAV calendar, one event
-- resource per VEVENT, kept as the feed shows it by src/destinations/. The password is kept sealed by the token
-- vault, bound to the destination's id, never as a plain column.
CREATE TYPE "caldav_destination_state" AS ENUM ('active', 'needs_credentials', 'failing', 'paused');

CREATE TABLE "caldav_destination" (
    "id" UUID NOT NULL,
    "feed_id" UUID NOT NULL,
    "server_url" TEXT NOT NULL,
    "calendar_url" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "password_sealed" TEXT NOT NULL,
    "calendar_name" TEXT NOT NULL,
    "state" "caldav_destination_state" NOT NULL DEFAULT 'active',
    "last_push_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    -- Moved by the triggers below: changes to what the feed shows that no push has carried yet, and when the
    -- oldest of them was committed (where a push's end-to-end lag starts).
    "pending_changes" INTEGER NOT NULL DEFAULT 0,
    "pending_since" TIMESTAMPTZ(3),
    "retry_at" TIMESTAMPTZ(3),
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "last_reconciled_at" TIMESTAMPTZ(3),
    "reconcile_requested_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "caldav_destination_pkey" PRIMARY KEY ("id")
);
-- One destination per calendar: the feeds' UIDs must not meet in one calendar collection.
CREATE UNIQUE INDEX "caldav_destination_calendar_url_key" ON "caldav_destination"("calendar_url");
CREATE INDEX "caldav_destination_feed_id_idx" ON "caldav_destination"("feed_id");
ALTER TABLE "caldav_destination" ADD CONSTRAINT "caldav_destination_feed_id_fkey" FOREIGN KEY ("feed_id") REFERENCES "feed"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The events slotfeed wrote into a destination: a push compares the feed with these, never with what else the
-- calendar holds, so a person's own events are never touched.
CREATE TABLE "caldav_event" (
    "destination_id" UUID NOT NULL,
    "uid" TEXT NOT NULL,
    "href" TEXT NOT NULL,
    "etag" TEXT,
    "digest" TEXT NOT NULL,
    "written_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "caldav_event_pkey" PRIMARY KEY ("destination_id","uid")
);
ALTER TABLE "caldav_event" ADD CONSTRAINT "caldav_event_destination_id_fkey" FOREIGN KEY ("destination_id") REFERENCES "caldav_destination"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "caldav_destination_log" (
    "id" UUID NOT NULL,
    "destination_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "kind" TEXT NOT NULL,
    "uid" TEXT,
    "message" TEXT NOT NULL,
    CONSTRAINT "caldav_destination_log_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "caldav_destination_log_destination_id_at_idx" ON "caldav_destination_log"("destination_id", "at");
ALTER TABLE "caldav_destination_log" ADD CONSTRAINT "caldav_destination_log_destination_id_fkey" FOREIGN KEY ("destination_id") REFERENCES "caldav_destination"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A change to what a feed shows marks its destinations pending, whoever commits it (the sync worker, the CLI,
-- a page, psql): the connection's feed_version (moved by every change of its slots, event types and shown
-- columns), a team's membership or name (a team feed), the feed's own options, event type or revocation. The
-- worker's dispatcher hands pending destinations to the caldav queue. now() is the writing transaction's start.
CREATE FUNCTION "slotfeed_mark_caldav_destinations_pending"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'connection' THEN
    UPDATE "caldav_destination"
    SET "pending_changes" = "pending_changes" + 1, "pending_since" = COALESCE("pending_since", now())
    WHERE "feed_id" IN (
      SELECT "id" FROM "feed" WHERE "connection_id" = NEW."id"
      UNION
      SELECT f."id" FROM "feed" f JOIN "team_member" m ON m."team_id" = f."team_id"
      WHERE m."connection_id" = NEW."id"
    );
  ELSIF TG_TABLE_NAME = 'team' THEN
    UPDATE "caldav_destination"
    SET "pending_changes" = "pending_changes" + 1, "pending_since" = COALESCE("pending_since", now())
    WHERE "feed_id" IN (SELECT "id" FROM "feed" WHERE "team_id" = NEW."id");
  ELSE
    UPDATE "caldav_destination"
    SET "pending_changes" = "pending_changes" + 1, "pending_since" = COALESCE("pending_since", now())
    WHERE "feed_id" = NEW."id";
  END IF;
  RETURN NULL;
END;
$$;

-- No column list on these: UPDATE OF names the columns a statement sets, not those a BEFORE trigger moves (a
-- display name's change moves feed_version in the feed_views migration's trigger, an option's change
-- inputs_changed_at in the feed_inputs_changed_at migration's); WHEN sees the row as written.
CREATE TRIGGER "connection_marks_caldav_destinations"
AFTER UPDATE ON "connection"
FOR EACH ROW
WHEN (OLD."feed_version" IS DISTINCT FROM NEW."feed_version")
EXECUTE FUNCTION "slotfeed_mark_caldav_destinations_pending"();

CREATE TRIGGER "team_marks_caldav_destinations"
AFTER UPDATE ON "team"
FOR EACH ROW
WHEN (OLD."members_changed_at" IS DISTINCT FROM NEW."members_changed_at" OR OLD."name" IS DISTINCT FROM NEW."name")
EXECUTE FUNCTION "slotfeed_mark_caldav_destinations_pending"();

CREATE TRIGGER "feed_marks_caldav_destinations"
AFTER UPDATE ON "feed"
FOR EACH ROW
WHEN (
  OLD."inputs_changed_at" IS DISTINCT FROM NEW."inputs_changed_at"
  OR OLD."revoked_at" IS DISTINCT FROM NEW."revoked_at"
)
EXECUTE FUNCTION "slotfeed_mark_caldav_destinations_pending"();
