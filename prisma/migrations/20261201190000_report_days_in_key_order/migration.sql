-- Report days read in key order (issue 43): a year's utilization over all connections read every stored day
-- whole, joined it to its connection, then sorted the 1.8 million rows of 10,000 connections by the report's order
-- (on disk): 2.5-2.6 s as CSV. The report now reads each connection's days, in its order, from the primary key
-- (src/store/report-queries/stored-days.ts, storedDaysInOrder): in day order, with no sort of the whole. The key
-- holds the figures too (INCLUDE), so no heap page is read for them: 1.5-1.6 s. The key grows by a tenth
-- (docs/performance.md), and a figure rewritten in place (a day stored again) is no longer a HOT update.
ALTER TABLE "utilization_day"
    DROP CONSTRAINT "utilization_day_pkey",
    ADD CONSTRAINT "utilization_day_pkey" PRIMARY KEY ("connection_id", "day")
        INCLUDE ("offered_minutes", "bookings", "booked_minutes");
-- The bookings report's days, the same way.
ALTER TABLE "booking_day"
    DROP CONSTRAINT "booking_day_pkey",
    ADD CONSTRAINT "booking_day_pkey" PRIMARY KEY ("connection_id", "day")
        INCLUDE ("bookings", "booked_minutes", "median_lead_hours", "mean_lead_hours", "opened");

-- A page's rows are read from the index alone once VACUUM has marked the page all-visible. The tables grow a day's
-- rows at a time (the retention run's) and are seldom updated, so autovacuum visits them only for what was
-- inserted: by default once a fifth of the table is new since its last visit, here once a hundredth is.
ALTER TABLE "utilization_day" SET (autovacuum_vacuum_insert_scale_factor = 0.01);
ALTER TABLE "booking_day" SET (autovacuum_vacuum_insert_scale_factor = 0.01);
