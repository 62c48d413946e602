-- Booking weeks stored once they are over (issue 43): the bookings report by week read every booking of a year of
-- 10,000 connections (6.2 million) to work out each week's median lead, 12-16 s as CSV. A week's median cannot be
-- made from its days' medians, so the retention run now keeps each week's figures as the report computes them,
-- once the week's last day is stored (src/store/report-queries/booking-weeks.ts), and the report reads those.
--
-- booking_week: one row per connection and local week (its Monday) with bookings detected in it or slots first
-- seen in it: the same figures as booking_day's. Its key holds them (INCLUDE), so that a connection's weeks are
-- read from it alone, in order.
CREATE TABLE "booking_week" (
    "connection_id" UUID NOT NULL,
    "week" DATE NOT NULL,
    "bookings" INTEGER NOT NULL,
    "booked_minutes" DOUBLE PRECISION,
    "median_lead_hours" DOUBLE PRECISION,
    "mean_lead_hours" DOUBLE PRECISION,
    "opened" INTEGER NOT NULL,
    CONSTRAINT "booking_week_pkey" PRIMARY KEY ("connection_id", "week")
        INCLUDE ("bookings", "booked_minutes", "median_lead_hours", "mean_lead_hours", "opened")
);
ALTER TABLE "booking_week" ADD CONSTRAINT "booking_week_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "booking_week" SET (autovacuum_vacuum_insert_scale_factor = 0.01);

-- How far a connection's weeks are stored: every week whose Sunday is on or before `weeks_through` (a Sunday), in
-- report_days_stored's zone. NULL: none yet, as in every installation this migration finds; the next retention
-- run stores their weeks from the bookings and the stored days, which are kept for good.
ALTER TABLE "report_days_stored" ADD COLUMN "weeks_through" DATE;

-- A week after the stored ones reads each connection's bookings since that week began (a probe of this index a
-- connection, 10,000 for a year's report over 10,000 connections), and so does the day the bookings report by day
-- works out (today's). The index now holds what those read of a booking besides its key (INCLUDE), so that a probe
-- reads no heap page: the week's bookings went from 1.1 s to 0.2 s of that report. Rebuilt, it takes a few seconds
-- per million bookings, with writes to the table held meanwhile; its size is about the same (alignment).
DROP INDEX "booking_connection_id_detected_at_idx";
CREATE INDEX "booking_connection_id_detected_at_idx" ON "booking"("connection_id", "detected_at")
    INCLUDE ("starts_at", "ends_at");
