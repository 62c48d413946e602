-- Availability days stored once they are over (issue 43): the availability report as of an instant T unnested every
-- packed slot of every day after T (a year of 10,000 connections: 237 slots a connection-day, 30 days ahead of T,
-- some 70 million elements; over 60 s). A slot is free at T when it was first seen by T and neither closed nor
-- started by then, so a day's free slots at any T follow from two sorted lists: when its slots were first seen, and
-- when each stopped being free (closed, or started, whichever came first). The retention run keeps those lists per
-- connection, local day and event type once the day is over (src/store/report-queries/availability-days.ts), with
-- running counts and lengths, and the report reads each day's figures at T by binary search (width_bucket).
--
-- availability_day: one row per connection, local day (in report_days_stored's zone) and event type with a slot that
-- was ever free. Each list is distinct instants in ascending order, with the running count of slots and sum of their
-- lengths in milliseconds through each:
--   seen_*:         first sightings;
--   closed_early_*: slots that stopped being free on an earlier local day (taken or withdrawn before the day began).
-- With the sightings, all a report as of a T before the day needs: a few instants a day, since a sync stamps every
-- slot it first sees with one instant.
-- availability_day_closing: the same day's other closings, on the day itself (most at their start: an instant a
-- slot), read only for T's own day. Kept apart so that a report reading the 30 days ahead of T reads these long lists
-- for one of them: in one row they made it 2 KB, a heap page read for every four days.
CREATE TABLE "availability_day" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "upstream_event_id" TEXT NOT NULL,
    "seen_at" TIMESTAMPTZ(3)[] NOT NULL,
    "seen_slots" INTEGER[] NOT NULL,
    "seen_ms" BIGINT[] NOT NULL,
    "closed_early_at" TIMESTAMPTZ(3)[] NOT NULL,
    "closed_early_slots" INTEGER[] NOT NULL,
    "closed_early_ms" BIGINT[] NOT NULL,
    CONSTRAINT "availability_day_pkey" PRIMARY KEY ("connection_id", "day", "upstream_event_id")
);
ALTER TABLE "availability_day" ADD CONSTRAINT "availability_day_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- Pruned by day, as closed slots are, once every slot of the day has started RETENTION_CLOSED_SLOTS_DAYS ago and none is
-- kept (retention.ts); a day's closings with it, by their key.
CREATE INDEX "availability_day_day_idx" ON "availability_day"("day");

CREATE TABLE "availability_day_closing" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "upstream_event_id" TEXT NOT NULL,
    "closed_at" TIMESTAMPTZ(3)[] NOT NULL,
    "closed_slots" INTEGER[] NOT NULL,
    "closed_ms" BIGINT[] NOT NULL,
    CONSTRAINT "availability_day_closing_pkey" PRIMARY KEY ("connection_id", "day", "upstream_event_id")
);
ALTER TABLE "availability_day_closing" ADD CONSTRAINT "availability_day_closing_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- How far a connection's availability days are stored, in report_days_stored's zone: through `through` when set (the
-- retention run stores them with the other days), NULL: none yet, as in every installation this migration finds. The
-- next retention run stores them from the slot history still kept. availability_ahead: the most days before a stored
-- day that a slot of it was first seen (the sync horizon, in effect): a report as of T reads a connection's stored days
-- from T's to that many after it, not every day from T's to yesterday (six months of them for an --at five months back).
ALTER TABLE "report_days_stored" ADD COLUMN "availability_through" DATE, ADD COLUMN "availability_ahead" INTEGER;
