-- Cadence by date band (src/sync/cadence-bands.ts): each connection's bands are due on their own times.
-- - connection.band_state: per band name, when it is next due, this connection's interval factor and what
--   its last pull cost; next_sync_at stays the earliest of them, so the tick's query is unchanged.
-- - overview.band: an overview is kept per event type and band, since a partial sync replaces only the
--   bands it pulled. Rows written before bands existed have '' and are replaced by the next sync.
-- - sync_run.bands: the bands a run pulled (empty for runs before bands, and runs that pulled nothing).
-- - sync_run.changes_by_band and staleness_bound_seconds: how many slot changes a successful run stored, by
--   how far ahead they start (sync/date-bands.ts), and the time since the connection's previous successful
--   sync (each of those changes happened after it): the sync-health report's staleness per band.
ALTER TABLE "connection" ADD COLUMN "band_state" JSONB NOT NULL DEFAULT '{}';
ALTER TABLE "overview" ADD COLUMN "band" TEXT NOT NULL DEFAULT '';
ALTER TABLE "sync_run" ADD COLUMN "bands" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "sync_run" ADD COLUMN "changes_by_band" JSONB NOT NULL DEFAULT '{}';
ALTER TABLE "sync_run" ADD COLUMN "staleness_bound_seconds" DOUBLE PRECISION;
