-- sync-health's day so far (issue 43): over all connections, a report up to now read two stored rows a connection
-- and then counted every run since each connection's last stored day, run by run: 3.4 million runs for 10,000
-- connections at the default bands, ~20 s. The retention run (hourly) now keeps, per connection, what those runs
-- came to as of a snapshot (src/store/sync-health-so-far.ts), so that a report counts only the runs that snapshot
-- did not see: about an hour of them.
--
-- Which runs a snapshot saw is told exactly by the transaction that wrote each run, not by a clock: a sync's
-- commit can begin minutes after its run started. recorded_xid is that transaction's id (an xid8, as bigint:
-- Prisma has no xid8). Rows written before this migration have none, and every snapshot taken after it saw them.
ALTER TABLE "sync_run" ADD COLUMN "recorded_xid" BIGINT;
ALTER TABLE "sync_run" ALTER COLUMN "recorded_xid" SET DEFAULT ((pg_current_xact_id())::text)::bigint;
CREATE INDEX "sync_run_recorded_xid_idx" ON "sync_run"("recorded_xid");

-- sync_health_so_far: per connection with sync-health's days stored, the totals (as sync_health_day holds them) of
-- its runs after `stored_through` that started by `counted_at` and that `snapshot` (a pg_snapshot's text) saw.
-- Good while the connection's stored days and zone are these; packing or pruning its runs sets stored_through to
-- NULL in the same transaction (it holds for nothing then), and the next retention run counts it again.
CREATE TABLE "sync_health_so_far" (
    "connection_id" UUID NOT NULL,
    "zone" TEXT NOT NULL,
    "stored_through" DATE,
    "counted_at" TIMESTAMPTZ(3) NOT NULL,
    "snapshot" TEXT NOT NULL,
    "succeeded" INTEGER NOT NULL,
    "failed" INTEGER NOT NULL,
    "superseded" INTEGER NOT NULL,
    "interrupted" INTEGER NOT NULL,
    "attempts" INTEGER NOT NULL,
    "calls" DOUBLE PRECISION NOT NULL,
    "histograms" BYTEA NOT NULL,
    "last_error" TEXT,
    "last_error_at" TIMESTAMPTZ(3),
    CONSTRAINT "sync_health_so_far_pkey" PRIMARY KEY ("connection_id")
);
ALTER TABLE "sync_health_so_far" ADD CONSTRAINT "sync_health_so_far_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;
