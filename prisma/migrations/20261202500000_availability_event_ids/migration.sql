-- The event types a connection has availability days of, kept with how far they are stored (issue 43): the
-- availability report reads each connection's event types in title order before their days, and found them by a
-- probe of the days' key each (a skip scan), 40,000 probes for 10,000 connections, about a tenth of what was left
-- of the report's time (src/store/report-queries/availability-days.ts, storedAvailabilityInOrder).
--
-- A report that reads this list misses any day whose event type is not in it, so the list is kept by the database
-- itself, whatever writes the days: the retention run of this version, one of the version before still running
-- after this migration (adding columns needs no restart: docs/operating.md), or a hand's INSERT. A day inserted adds
-- its event type to its connection's list; a connection's row of marks made again (a zone move deletes it with its
-- days and makes it anew) starts from the days it has. A day pruned leaves its id, which then reads no day.
ALTER TABLE "report_days_stored" ADD COLUMN "availability_event_ids" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];

CREATE FUNCTION "availability_event_ids_of"(connection UUID) RETURNS TEXT[] LANGUAGE sql STABLE AS $$
  SELECT ARRAY(SELECT DISTINCT a.upstream_event_id FROM availability_day a WHERE a.connection_id = connection ORDER BY 1)
$$;

UPDATE "report_days_stored" s SET "availability_event_ids" = "availability_event_ids_of"(s."connection_id")
WHERE EXISTS (SELECT 1 FROM "availability_day" a WHERE a."connection_id" = s."connection_id");

-- Days inserted (ON CONFLICT's updates are days already listed): their event types added, once a statement.
CREATE FUNCTION "availability_days_listed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE report_days_stored s
  SET availability_event_ids = ARRAY(SELECT DISTINCT e.id FROM unnest(s.availability_event_ids || n.ids) e(id) ORDER BY 1)
  FROM (SELECT d.connection_id, array_agg(DISTINCT d.upstream_event_id) AS ids FROM inserted_days d GROUP BY 1) n
  WHERE s.connection_id = n.connection_id AND NOT n.ids <@ s.availability_event_ids;
  RETURN NULL;
END
$$;
CREATE TRIGGER "availability_days_listed" AFTER INSERT ON "availability_day"
  REFERENCING NEW TABLE AS inserted_days FOR EACH STATEMENT EXECUTE FUNCTION "availability_days_listed"();

-- A row of marks inserted (not one an upsert updated): its list from the days the connection has.
CREATE FUNCTION "availability_event_ids_filled"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE report_days_stored SET availability_event_ids = availability_event_ids_of(NEW.connection_id)
  WHERE connection_id = NEW.connection_id AND EXISTS (SELECT 1 FROM availability_day a WHERE a.connection_id = NEW.connection_id);
  RETURN NULL;
END
$$;
CREATE TRIGGER "availability_event_ids_filled" AFTER INSERT ON "report_days_stored"
  FOR EACH ROW EXECUTE FUNCTION "availability_event_ids_filled"();
