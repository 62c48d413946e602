-- sync-health days stored once they are over (issue 43): sync-health over all connections read every run of its
-- range (389 million for 10,000 connections' 90 days at the default bands) to count them and take percentiles
-- of their durations and staleness. The retention run now keeps, with the other report days
-- (src/store/report-days.ts), a running total per connection and local day: the runs by outcome, their calls,
-- the last error, and histograms of durations and of staleness per date band (src/lib/log-histogram.ts). A
-- range is the total at its last day less the total before its first: two rows a connection, whatever its length.
--
-- sync_health_day: the totals through `day`, since the connection's first stored day; a day without runs has no
-- row (the one before holds). `histograms`: the log-bucket counts as bytes (encodeHistograms).
CREATE TABLE "sync_health_day" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "succeeded" INTEGER NOT NULL,
    "failed" INTEGER NOT NULL,
    "superseded" INTEGER NOT NULL,
    "interrupted" INTEGER NOT NULL,
    "attempts" INTEGER NOT NULL,
    "calls" DOUBLE PRECISION NOT NULL,
    "histograms" BYTEA NOT NULL,
    "last_error" TEXT,
    "last_error_at" TIMESTAMPTZ(3),
    CONSTRAINT "sync_health_day_pkey" PRIMARY KEY ("connection_id", "day")
);
ALTER TABLE "sync_health_day" ADD CONSTRAINT "sync_health_day_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- How far sync-health's totals go, apart from the other report days': days stored before this migration (or by a
-- scheduler of the version before it, still running) have none, and the next retention run counts them from the
-- connection's first run, leaving utilization's and the bookings' days as they are.
ALTER TABLE "report_days_stored" ADD COLUMN "sync_health_through" DATE;
