-- Availability days read from an index alone (issue 43): the availability report reads some 30 days ahead of its
-- instant for every connection and event type, 890,000 rows for 10,000 connections as of a month back, and each
-- was a heap page of its own: the retention run stores a day of every connection at a time, so a connection's days
-- lie a page apart. This index holds their lists as well (INCLUDE), in the key's order (connection, event type, day),
-- so a connection's days are read from a few adjacent index pages instead
-- (src/store/report-queries/availability-days.ts, storedAvailabilityInOrder).
--
-- An index entry must fit a third of a page (2,704 bytes) and a day's lists have no bound of their own, so the index
-- holds only the days with at most 64 instants in their two lists and an event type id of at most 512 bytes (under
-- 2,100 bytes an entry): most days hold a few sightings, since a sync stamps every slot it first sees with one
-- instant. The report reads the other days from the table through the second, small index. Both predicates are
-- LISTS_INDEXED's, word for word, so that Postgres can tell the report's reads are covered.
CREATE INDEX "availability_day_lists_idx" ON "availability_day" ("connection_id", "upstream_event_id", "day")
    INCLUDE ("seen_at", "seen_slots", "seen_ms", "closed_early_at", "closed_early_slots", "closed_early_ms")
    WHERE (cardinality(seen_at) + cardinality(closed_early_at) <= 64 AND octet_length(upstream_event_id) <= 512);
CREATE INDEX "availability_day_long_lists_idx" ON "availability_day" ("connection_id", "upstream_event_id", "day")
    WHERE NOT (cardinality(seen_at) + cardinality(closed_early_at) <= 64 AND octet_length(upstream_event_id) <= 512);

-- An entry is read from the index alone once VACUUM has marked its heap page all-visible. The table grows a day's
-- rows at a time (the retention run's), a 180th of it, so autovacuum visits it for what was inserted once a
-- hundredth of it is new (by default, a fifth: a month of days would be read from the heap).
ALTER TABLE "availability_day" SET (autovacuum_vacuum_insert_scale_factor = 0.01);
