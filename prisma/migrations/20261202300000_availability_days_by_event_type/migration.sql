-- Availability days keyed by event type before day (issue 43): the availability report lists each connection's rows
-- by event type (its title at the report's instant), then day, and read them from a key in day order, so Postgres
-- sorted every connection's rows again: for 10,000 connections as of a month back, 870,000 rows and a fifth of the
-- report's time. Keyed (connection, event type, day), a connection's days of one event type come out of the key in
-- day order, the report reads its event types in title order (src/store/report-queries/availability-days.ts,
-- storedAvailabilityInOrder), and the sort above them finds each connection's rows sorted already. The key is the
-- same size (the same columns, another order); storing (ON CONFLICT on the three columns) and pruning (by the day
-- index, then the whole key) are unchanged.
ALTER TABLE "availability_day"
    DROP CONSTRAINT "availability_day_pkey",
    ADD CONSTRAINT "availability_day_pkey" PRIMARY KEY ("connection_id", "upstream_event_id", "day");
