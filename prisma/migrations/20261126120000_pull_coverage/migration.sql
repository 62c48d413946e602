-- The staleness bound per change, measured from when the changed slot's date was last pulled (partial syncs
-- make that older than the previous sync: src/sync/pull-coverage.ts).
-- - connection.pull_coverage: when the event types, and each range of slot starts, were last pulled. '{}' (every
--   connection before this) reads as never pulled: a change found before the next pull of its date is not counted.
-- - sync_run.change_staleness: the slot changes a successful run stored, as [{band, boundSeconds, changes}] by
--   how far ahead they start and their bound. Runs written before this have none: their single bound (the time
--   since the previous sync) understated the changes of partial syncs, so it is not carried over.
-- - sync_run.staleness_bound_seconds now means the time since the oldest previous pull of what the run pulled.
ALTER TABLE "connection" ADD COLUMN "pull_coverage" JSONB NOT NULL DEFAULT '{}';
ALTER TABLE "sync_run" ADD COLUMN "change_staleness" JSONB NOT NULL DEFAULT '[]';
