-- Retention: sync runs and closed slots older than their configured ages are pruned in small batches
-- (src/store/retention.ts). What the reports need of them beyond that is kept first:
-- - connection.first_synced_at: when a connection's first sync succeeded (the bookings report counts slots
--   opened after it), which pruning would otherwise move to the oldest run kept;
-- - sync_run_daily: per connection, UTC day and outcome, the pruned runs' count, upstream calls and seconds.
ALTER TABLE "connection" ADD COLUMN "first_synced_at" TIMESTAMPTZ(3);
UPDATE "connection" c SET "first_synced_at" = f."first"
FROM (SELECT "connection_id", MIN("finished_at") AS "first" FROM "sync_run" WHERE "outcome" = 'succeeded' GROUP BY 1) f
WHERE f."connection_id" = c."id";

-- Pruning finds closed slots by when they closed.
CREATE INDEX "slot_gone_at_idx" ON "slot"("gone_at");

CREATE TABLE "sync_run_daily" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "outcome" "sync_outcome" NOT NULL,
    "runs" INTEGER NOT NULL,
    "upstream_calls" BIGINT NOT NULL,
    "seconds" DOUBLE PRECISION NOT NULL,
    CONSTRAINT "sync_run_daily_pkey" PRIMARY KEY ("connection_id", "day", "outcome")
);
ALTER TABLE "sync_run_daily" ADD CONSTRAINT "sync_run_daily_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;
