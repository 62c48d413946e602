-- The bookings report's totals and heat map stored as running totals (issue 43): beside its rows, every grouping of
-- the bookings report (and the admin's heat map) read every booking of its range for the totals (bookings, booked
-- minutes, median and mean lead) and the bookings by weekday and hour: 6.2 million for a year of 10,000
-- connections, 12.6-15 s. Counts and sums add up across days; a median does not, so the leads are kept as a
-- log-bucket histogram (src/lib/log-histogram.ts), read back within 1 %.
--
-- booking_total_day: one row per connection and local day (in report_days_stored's zone) with a booking detected on
-- it, holding what the connection's bookings came to from its first stored day through that day: bookings, booked
-- and lead time in milliseconds (the booking's instants are kept to the millisecond, so the sums are exact), and
-- `histograms` (encodeHistograms's bytes): 'lead', the leads in seconds by log bucket, and 'start', the bookings by
-- the weekday and hour their time starts, (ISO weekday - 1) * 24 + hour. A range of days is the total at its last
-- less the total before its first: two rows a connection (src/store/report-queries/booking-totals.ts).
CREATE TABLE "booking_total_day" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "bookings" INTEGER NOT NULL,
    "booked_ms" BIGINT NOT NULL,
    "lead_ms" BIGINT NOT NULL,
    "histograms" BYTEA NOT NULL,
    CONSTRAINT "booking_total_day_pkey" PRIMARY KEY ("connection_id", "day")
);
ALTER TABLE "booking_total_day" ADD CONSTRAINT "booking_total_day_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "booking_total_day" SET (autovacuum_vacuum_insert_scale_factor = 0.01);

-- How far a connection's running totals go, in report_days_stored's zone: `through` once set (the retention run
-- stores them with the other days). NULL: none yet, as in every installation this migration finds; the next
-- retention run stores them from the bookings, which are kept for good, and until then the report counts the
-- connection's bookings as before.
ALTER TABLE "report_days_stored" ADD COLUMN "booking_totals_through" DATE;
