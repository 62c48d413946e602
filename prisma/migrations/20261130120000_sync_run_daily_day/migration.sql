-- sync_run_daily by day (issue 43): sync-health reads the rollup for the days after each connection's stored ones,
-- which lie after the earliest of their first unstored days (yesterday or today, once the retention run has stored
-- the rest). Its key starts with the connection, so that bound on the day alone made Postgres read the whole
-- rollup to find no row: a year of 10,000 connections' runs (8.25 million rows) in 0.25 s for a month's report
-- and 0.86 s for the year's, every time. By day, it finds the few rows after the bound directly.
CREATE INDEX "sync_run_daily_day_idx" ON "sync_run_daily"("day");
