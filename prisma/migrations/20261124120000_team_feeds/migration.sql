-- Team feeds: a feed belongs to one connection or to one team, never both. A team's feed combines its members'
-- free time (src/feeds/team-feed.ts) and goes with the team.
ALTER TABLE "feed" ALTER COLUMN "connection_id" DROP NOT NULL;
ALTER TABLE "feed" ADD COLUMN "team_id" UUID;
ALTER TABLE "feed" ADD CONSTRAINT "feed_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "team"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "feed" ADD CONSTRAINT "feed_belongs_to_one" CHECK (("connection_id" IS NULL) <> ("team_id" IS NULL));
CREATE INDEX "feed_team_id_idx" ON "feed"("team_id");

-- When the team's membership last changed: a member leaving changes a team feed's bytes with no snapshot of
-- anyone's moving, and Last-Modified must not go back. Moved by the trigger below, whoever writes.
ALTER TABLE "team" ADD COLUMN "members_changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

CREATE FUNCTION "slotfeed_touch_team_members"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE "team" SET "members_changed_at" = GREATEST("members_changed_at", now())
    WHERE "id" IN (SELECT "team_id" FROM new_rows);
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE "team" SET "members_changed_at" = GREATEST("members_changed_at", now())
    WHERE "id" IN (SELECT "team_id" FROM old_rows);
  ELSE
    UPDATE "team" SET "members_changed_at" = GREATEST("members_changed_at", now())
    WHERE "id" IN (SELECT "team_id" FROM new_rows UNION SELECT "team_id" FROM old_rows);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "team_member_insert_touches_team" AFTER INSERT ON "team_member"
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_touch_team_members"();
CREATE TRIGGER "team_member_update_touches_team" AFTER UPDATE ON "team_member"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_touch_team_members"();
CREATE TRIGGER "team_member_delete_touches_team" AFTER DELETE ON "team_member"
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_touch_team_members"();

-- Change notices (see 20261121020000_feed_change_notify): a team feed is remembered under its team's id and each
-- member's connection id, so a notice names the team when the team row changes (its name, its membership
-- through the trigger above) or goes, and a feed's notice names whichever it belongs to.
CREATE OR REPLACE FUNCTION "slotfeed_notify_feed_change"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('slotfeed_feed_changes', 'reset');
    RETURN NULL;
  END IF;
  IF TG_TABLE_NAME IN ('connection', 'team') THEN
    PERFORM pg_notify('slotfeed_feed_changes', COALESCE(NEW.id, OLD.id)::text);
    RETURN NULL;
  END IF;
  -- A feed: its owner, and its former owner when an UPDATE moved it.
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('slotfeed_feed_changes', COALESCE(OLD.connection_id, OLD.team_id)::text);
  END IF;
  IF TG_OP = 'UPDATE' AND (NEW.connection_id IS DISTINCT FROM OLD.connection_id
                           OR NEW.team_id IS DISTINCT FROM OLD.team_id) THEN
    PERFORM pg_notify('slotfeed_feed_changes', COALESCE(NEW.connection_id, NEW.team_id)::text);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "team_feed_change"
AFTER UPDATE OR DELETE ON "team"
FOR EACH ROW EXECUTE FUNCTION "slotfeed_notify_feed_change"();

CREATE TRIGGER "team_truncate"
AFTER TRUNCATE ON "team"
FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_notify_feed_change"();
