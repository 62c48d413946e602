-- A person's calendar keeps nothing of slotfeed's that no longer updates (issue 34). Whatever ends a destination
-- (its removal, or the deletion of its feed, connection or team, by a page, the CLI, retention or psql) leaves a
-- cleanup behind: the server, the calendar, the sealed credentials and the events slotfeed recorded writing
-- there. A worker deletes those events from the calendar and then the cleanup, retried until it is done or the
-- credentials are refused (then shown to the admin, and to the owner while they exist).

-- The feed's owner, kept on the destination: by the time a feed's deletion cascades to its destinations, the
-- feed row is gone, and a cleanup must still know whose page shows it.
ALTER TABLE "caldav_destination" ADD COLUMN "owner_connection_id" UUID, ADD COLUMN "owner_team_id" UUID;
UPDATE "caldav_destination" d
SET "owner_connection_id" = f."connection_id", "owner_team_id" = f."team_id"
FROM "feed" f WHERE f."id" = d."feed_id";

CREATE FUNCTION "slotfeed_caldav_destination_owner"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  SELECT "connection_id", "team_id" INTO NEW."owner_connection_id", NEW."owner_team_id"
  FROM "feed" WHERE "id" = NEW."feed_id";
  RETURN NEW;
END;
$$;

CREATE TRIGGER "caldav_destination_owner"
BEFORE INSERT OR UPDATE OF "feed_id" ON "caldav_destination"
FOR EACH ROW EXECUTE FUNCTION "slotfeed_caldav_destination_owner"();

-- A UID of the feed's that the calendar holds as someone else's event (a 409, 412 or no-uid-conflict answer to
-- a create): recorded so that it is said once and never changed, deleted or created again by a push.
ALTER TABLE "caldav_event" ADD COLUMN "clash" BOOLEAN NOT NULL DEFAULT false;

CREATE TYPE "caldav_cleanup_state" AS ENUM ('pending', 'needs_credentials');

CREATE TABLE "caldav_cleanup" (
    -- The destination's id: its sealed password is bound to it.
    "id" UUID NOT NULL,
    "feed_id" UUID NOT NULL,
    "owner_connection_id" UUID,
    "owner_team_id" UUID,
    "server_url" TEXT NOT NULL,
    "calendar_url" TEXT NOT NULL,
    "calendar_name" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "password_sealed" TEXT NOT NULL,
    -- [{uid, href, etag}]: what slotfeed recorded writing there, and wrote after the destination ended.
    "events" JSONB NOT NULL DEFAULT '[]',
    "reason" TEXT NOT NULL,
    "state" "caldav_cleanup_state" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "retry_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "caldav_cleanup_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "caldav_cleanup_owner_connection_id_idx" ON "caldav_cleanup"("owner_connection_id");
CREATE INDEX "caldav_cleanup_owner_team_id_idx" ON "caldav_cleanup"("owner_team_id");

-- Before the row goes (its events' records are deleted by the cascade after this), unless the one who removes it
-- asked to keep the events (SET LOCAL slotfeed.caldav_keep_events = 'on'). The reason and time are the remover's
-- (slotfeed.caldav_removal_reason, slotfeed.caldav_removed_at: slotfeed's clock), else the destination went with
-- its feed, connection or team, now.
CREATE FUNCTION "slotfeed_caldav_destination_cleanup"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF COALESCE(current_setting('slotfeed.caldav_keep_events', true), '') = 'on' THEN
    RETURN OLD;
  END IF;
  INSERT INTO "caldav_cleanup" (
    "id", "feed_id", "owner_connection_id", "owner_team_id", "server_url", "calendar_url", "calendar_name",
    "username", "password_sealed", "events", "reason", "created_at"
  )
  VALUES (
    OLD."id", OLD."feed_id", OLD."owner_connection_id", OLD."owner_team_id", OLD."server_url",
    OLD."calendar_url", OLD."calendar_name", OLD."username", OLD."password_sealed",
    COALESCE(
      (SELECT jsonb_agg(jsonb_build_object('uid', e."uid", 'href', e."href", 'etag', e."etag") ORDER BY e."uid")
       FROM "caldav_event" e WHERE e."destination_id" = OLD."id" AND NOT e."clash"),
      '[]'::jsonb
    ),
    COALESCE(NULLIF(current_setting('slotfeed.caldav_removal_reason', true), ''),
             'its feed, connection or team was deleted'),
    COALESCE(NULLIF(current_setting('slotfeed.caldav_removed_at', true), '')::timestamptz, now())
  )
  ON CONFLICT ("id") DO NOTHING;
  RETURN OLD;
END;
$$;

CREATE TRIGGER "caldav_destination_leaves_cleanup"
BEFORE DELETE ON "caldav_destination"
FOR EACH ROW EXECUTE FUNCTION "slotfeed_caldav_destination_cleanup"();
