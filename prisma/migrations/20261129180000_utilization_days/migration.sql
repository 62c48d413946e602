-- Utilization's answer for each local day that is over, stored (issue 43): an all-connection report over a month
-- or a year read every slot of every day in it (78 million slots for 10,000 connections' month) to add up a
-- few numbers per connection and day. A day's figures cannot change once the day is over in the connection's
-- zone (its slots were all seen before they started, its bookings detected before them), so the retention
-- pass stores them (src/store/utilization-days.ts) with the very query the report runs, and the report reads
-- the stored days and computes only the days after them.
--
-- utilization_day: one row per connection and local day with offered time, the report's own figures.
CREATE TABLE "utilization_day" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "offered_minutes" DOUBLE PRECISION NOT NULL,
    "bookings" INTEGER NOT NULL,
    "booked_minutes" DOUBLE PRECISION NOT NULL,
    CONSTRAINT "utilization_day_pkey" PRIMARY KEY ("connection_id", "day")
);
ALTER TABLE "utilization_day" ADD CONSTRAINT "utilization_day_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- utilization_stored: how far a connection's days are stored, and in which zone they were counted. Every local
-- day up to `through` is (a day without offered time has no row); days counted in another zone than the
-- connection's current one are not used, and the next pass counts them again.
CREATE TABLE "utilization_stored" (
    "connection_id" UUID NOT NULL,
    "zone" TEXT NOT NULL,
    "through" DATE NOT NULL,
    CONSTRAINT "utilization_stored_pkey" PRIMARY KEY ("connection_id")
);
ALTER TABLE "utilization_stored" ADD CONSTRAINT "utilization_stored_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The days after the stored ones: their bookings found by start, not by reading every booking.
CREATE INDEX "booking_starts_at_idx" ON "booking"("starts_at");
