-- Feed change notifications: the web role keeps resolved feed tokens in memory and forgets one when Postgres
-- says it changed. Triggers, not application code, send the notice, so every writer is covered: the worker's
-- commit, the CLI, the admin page, an operator's UPDATE in psql. The payload is the connection id ('reset'
-- for a TRUNCATE, which concerns every connection); NOTIFY is delivered when the writing transaction commits.

CREATE FUNCTION "slotfeed_notify_feed_change"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('slotfeed_feed_changes', 'reset');
    RETURN NULL;
  END IF;
  IF TG_TABLE_NAME = 'connection' THEN
    PERFORM pg_notify('slotfeed_feed_changes', COALESCE(NEW.id, OLD.id)::text);
    RETURN NULL;
  END IF;
  -- A feed: its connection, and its former connection when an UPDATE moved it.
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('slotfeed_feed_changes', OLD.connection_id::text);
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.connection_id IS DISTINCT FROM OLD.connection_id THEN
    PERFORM pg_notify('slotfeed_feed_changes', NEW.connection_id::text);
  END IF;
  RETURN NULL;
END;
$$;

-- Only the connection columns a feed's bytes depend on: a sync that changes nothing else (next_sync_at,
-- last_sync_at) sends no notice and leaves the remembered lookups alone.
CREATE TRIGGER "connection_feed_change"
AFTER UPDATE OF "status", "display_name", "email", "timezone", "feed_version", "feed_changed_at", "last_sync_outcome"
ON "connection"
FOR EACH ROW
WHEN (
  OLD."status" IS DISTINCT FROM NEW."status"
  OR OLD."display_name" IS DISTINCT FROM NEW."display_name"
  OR OLD."email" IS DISTINCT FROM NEW."email"
  OR OLD."timezone" IS DISTINCT FROM NEW."timezone"
  OR OLD."feed_version" IS DISTINCT FROM NEW."feed_version"
  OR OLD."feed_changed_at" IS DISTINCT FROM NEW."feed_changed_at"
  OR OLD."last_sync_outcome" IS DISTINCT FROM NEW."last_sync_outcome"
)
EXECUTE FUNCTION "slotfeed_notify_feed_change"();

CREATE TRIGGER "connection_feed_delete"
AFTER DELETE ON "connection"
FOR EACH ROW EXECUTE FUNCTION "slotfeed_notify_feed_change"();

-- Any change to a feed row (token rotated, revoked, options, label, moved) or its deletion.
CREATE TRIGGER "feed_change"
AFTER UPDATE OR DELETE ON "feed"
FOR EACH ROW EXECUTE FUNCTION "slotfeed_notify_feed_change"();

CREATE TRIGGER "connection_truncate"
AFTER TRUNCATE ON "connection"
FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_notify_feed_change"();

CREATE TRIGGER "feed_truncate"
AFTER TRUNCATE ON "feed"
FOR EACH STATEMENT EXECUTE FUNCTION "slotfeed_notify_feed_change"();
