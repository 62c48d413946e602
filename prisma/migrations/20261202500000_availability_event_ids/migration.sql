-- The event types a connection has availability days of, kept with how far they are stored (issue 43): the
-- availability report reads each connection's event types in title order before their days, and found them by a
-- probe of the days' key each (a skip scan), 40,000 probes for 10,000 connections, about a fifth of what was left
-- of the report's time. The retention run adds the ids of the days it stores in the statement that stores them
-- (src/store/report-queries/availability-days.ts); a day pruned leaves its id, which then reads no day. Filled here
-- from the days stored so far.
ALTER TABLE "report_days_stored" ADD COLUMN "availability_event_ids" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
UPDATE "report_days_stored" s
SET "availability_event_ids" = ARRAY(
    SELECT DISTINCT a."upstream_event_id" FROM "availability_day" a WHERE a."connection_id" = s."connection_id"
    ORDER BY 1)
WHERE EXISTS (SELECT 1 FROM "availability_day" a WHERE a."connection_id" = s."connection_id");
