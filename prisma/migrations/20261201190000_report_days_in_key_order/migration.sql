-- Report days read in key order (issue 43): a year's utilization over all connections read every stored day
-- whole, joined it to its connection, then sorted the 1.8 million rows of 10,000 connections by the report's order
-- (on disk): 2.7 s of Postgres's time. The report now reads each connection's days, in its order, from the primary
-- key (src/store/report-queries/stored-days.ts, storedDaysInOrder): in day order, with no sort. The key holds the
-- figures too (INCLUDE), so no heap page is read for them: 1.6 s. The index grows by a tenth (106 to 116 MB for
-- 1.8 million days).
ALTER TABLE "utilization_day"
    DROP CONSTRAINT "utilization_day_pkey",
    ADD CONSTRAINT "utilization_day_pkey" PRIMARY KEY ("connection_id", "day")
        INCLUDE ("offered_minutes", "bookings", "booked_minutes");
-- The bookings report's days, the same way.
ALTER TABLE "booking_day"
    DROP CONSTRAINT "booking_day_pkey",
    ADD CONSTRAINT "booking_day_pkey" PRIMARY KEY ("connection_id", "day")
        INCLUDE ("bookings", "booked_minutes", "median_lead_hours", "mean_lead_hours", "opened");

-- A page's rows are read from the index alone once VACUUM has marked the page all-visible. The table only grows,
-- a day's rows at a time (the retention run's), so by default autovacuum would visit it after a fifth of it was new:
-- some 36 days. A hundredth keeps all but the last two days or so marked.
ALTER TABLE "utilization_day" SET (autovacuum_vacuum_insert_scale_factor = 0.01);
ALTER TABLE "booking_day" SET (autovacuum_vacuum_insert_scale_factor = 0.01);
