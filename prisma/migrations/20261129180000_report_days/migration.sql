-- Report days stored once they are over (issue 43): an all-connection report over a month or a year read every
-- slot of every day in it (78 million slots for 10,000 connections' month) to add up a few numbers per
-- connection and day. What a report counts of a local day cannot change once the day is over in the
-- connection's zone (its slots were all first seen on it or before, and before they started; its bookings
-- detected before they started), so the retention run stores those figures (src/store/report-days.ts) with the
-- very queries the reports run, and the reports read the stored days and compute only the days after them.
--
-- utilization_day: utilization's figures, one row per connection and local day with offered time.
CREATE TABLE "utilization_day" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "offered_minutes" DOUBLE PRECISION NOT NULL,
    "bookings" INTEGER NOT NULL,
    "booked_minutes" DOUBLE PRECISION NOT NULL,
    CONSTRAINT "utilization_day_pkey" PRIMARY KEY ("connection_id", "day")
);
ALTER TABLE "utilization_day" ADD CONSTRAINT "utilization_day_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- booking_day: the bookings report's figures by day, one row per connection and local day with bookings detected
-- on it or slots first seen on it (after the connection's first sync): bookings, booked minutes, median and
-- mean lead, opened slots.
CREATE TABLE "booking_day" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "bookings" INTEGER NOT NULL,
    "booked_minutes" DOUBLE PRECISION,
    "median_lead_hours" DOUBLE PRECISION,
    "mean_lead_hours" DOUBLE PRECISION,
    "opened" INTEGER NOT NULL,
    CONSTRAINT "booking_day_pkey" PRIMARY KEY ("connection_id", "day")
);
ALTER TABLE "booking_day" ADD CONSTRAINT "booking_day_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- report_days_stored: how far a connection's days are stored in both tables, and in which zone they were
-- counted. Every local day up to `through` is (a day without figures has no row); days counted in another zone
-- than the connection's current one are not used, and the next run counts them again.
CREATE TABLE "report_days_stored" (
    "connection_id" UUID NOT NULL,
    "zone" TEXT NOT NULL,
    "through" DATE NOT NULL,
    CONSTRAINT "report_days_stored_pkey" PRIMARY KEY ("connection_id")
);
ALTER TABLE "report_days_stored" ADD CONSTRAINT "report_days_stored_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The days after the stored ones: utilization's bookings found by start, and the packed slot days holding
-- their first sightings by the last of them, not by reading every booking or every packed day.
CREATE INDEX "booking_starts_at_idx" ON "booking"("starts_at");
CREATE INDEX "slot_history_first_seen_until_idx" ON "slot_history"("first_seen_until");
