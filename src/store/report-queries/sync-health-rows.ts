// sync-health's rows: per connection, how its syncs went: runs, success rate, median and p95 duration,
// upstream calls per run, staleness p95 per date band, the last error, and the connection's status.
//
// Semantics:
// - Runs are sync_run rows (one per attempt, failed ones included) that started at or before T and whose
//   start falls on a local day in --from/--to (the connection's zone, or --tz).
// - Runs older than RETENTION_SYNC_RUNS_DAYS were pruned into sync_run_daily (store/retention.ts): they are
//   counted from it, on their UTC day (that is all the rollup knows), for days that ended by T. The rollup
//   keeps counts per outcome and upstream calls, so runs, success rate and calls per run cover them; durations,
//   staleness and the last error are per run and cover the retained runs only.
// - Duration = finished_at − started_at in seconds; median and p95 are percentile_cont (interpolated), over
//   all runs of the selection. Upstream calls per run is their mean.
// - Last error: the latest failed run in the selection (its error code and message).
// - Status (and so "needs re-authorisation") is the connection's current one: it is not versioned.
// - Connections without runs in the selection are listed too (runs 0), so a connection that never syncs
//   shows up rather than vanishing from the report.
// - Staleness p95 per date band (lib/date-bands.ts): over every slot change the selection's successful runs
//   stored (opened, closed as taken or by its event type, moved), by how far ahead the slot starts, the 95th
//   percentile of its own staleness bound: the time since what showed it (its date's slots, or the list of
//   event types) was last pulled (store/pull-coverage.ts). Each change happened within that time, so this is
//   how stale it may have been at most; changes nothing had looked at before (a first sync) are not counted.
import { Prisma } from '../../generated/prisma/client.js';
import { changeStalenessRecords, syncRunRecords, type HistoryBounds } from './history-records.js';
import type { ReportScope } from './report-scope.js';
import { at, connectionName, dayRangeFilter, dayRangeInstants, type ReportDb } from './report-sql.js';

export interface SyncHealthRow {
  connection_id: string;
  connection: string;
  status: string;
  runs: number;
  succeeded: number;
  superseded: number;
  interrupted: number;
  median_seconds: number | null;
  p95_seconds: number | null;
  calls_per_run: number | null;
  stale_p95: Record<string, number | null> | null;
  last_error: string | null;
  last_error_at: Date | null;
}

/** Which sync_run_daily rows (alias `d`) count: their UTC day is in --from/--to and ended by T. */
function rolledUpDays(query: ReportScope): Prisma.Sql {
  const conditions = [
    Prisma.sql`((d.day + 1)::timestamp AT TIME ZONE 'UTC') <= ${at(query)}`,
    ...(query.connectionId === undefined ? [] : [Prisma.sql`d.connection_id = ${query.connectionId}::uuid`]),
    ...(query.from === undefined ? [] : [Prisma.sql`d.day >= ${query.from}::date`]),
    ...(query.to === undefined ? [] : [Prisma.sql`d.day <= ${query.to}::date`]),
  ];
  return Prisma.join(conditions, ' AND ');
}

export async function syncHealthRows(prisma: ReportDb, query: ReportScope): Promise<SyncHealthRow[]> {
  const startedAt = Prisma.sql`r.started_at`;
  const days = dayRangeInstants(query);
  // Runs started by T in the days asked for, live or packed (packed days outside them are skipped).
  const bounds: HistoryBounds = {
    connectionId: query.connectionId,
    startsFrom: days.from,
    startsUntil: days.until === undefined ? at(query) : Prisma.sql`LEAST(${at(query)}, ${days.until})`,
  };
  const connectionFilter =
    query.connectionId === undefined ? Prisma.empty : Prisma.sql`WHERE c.id = ${query.connectionId}::uuid`;
  return prisma.$queryRaw<SyncHealthRow[]>(Prisma.sql`
    WITH runs AS (
      SELECT r.connection_id, r.outcome, r.started_at, r.error_code, r.error_message, r.upstream_calls, r.seconds
      FROM ${syncRunRecords(bounds)} r JOIN connection c ON c.id = r.connection_id
      WHERE r.started_at <= ${at(query)}
        ${query.connectionId === undefined ? Prisma.empty : Prisma.sql`AND r.connection_id = ${query.connectionId}::uuid`}
        ${dayRangeFilter(query, startedAt)}
    ), per_connection AS (
      -- Superseded (a newer pull committed in its place) and interrupted (a shutdown) runs are neither
      -- successes nor failures: they are counted apart.
      SELECT connection_id, (COUNT(*) FILTER (WHERE outcome IN ('succeeded', 'failed')))::int AS runs,
             (COUNT(*) FILTER (WHERE outcome = 'succeeded'))::int AS succeeded,
             (COUNT(*) FILTER (WHERE outcome = 'superseded'))::int AS superseded,
             (COUNT(*) FILTER (WHERE outcome = 'interrupted'))::int AS interrupted,
             (percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds))::float8 AS median_seconds,
             (percentile_cont(0.95) WITHIN GROUP (ORDER BY seconds))::float8 AS p95_seconds,
             COUNT(*)::int AS attempts, SUM(upstream_calls)::float8 AS calls
      FROM runs GROUP BY 1
    ), rolled_up AS (
      -- The same counts of the runs retention pruned, from their daily rollup.
      SELECT d.connection_id, (SUM(d.runs) FILTER (WHERE d.outcome IN ('succeeded', 'failed')))::int AS runs,
             (SUM(d.runs) FILTER (WHERE d.outcome = 'succeeded'))::int AS succeeded,
             (SUM(d.runs) FILTER (WHERE d.outcome = 'superseded'))::int AS superseded,
             (SUM(d.runs) FILTER (WHERE d.outcome = 'interrupted'))::int AS interrupted,
             SUM(d.runs)::int AS attempts, SUM(d.upstream_calls)::float8 AS calls
      FROM sync_run_daily d
      WHERE ${rolledUpDays(query)}
      GROUP BY 1
    ), stale AS (
      -- One row per change (n changes of one band and bound count n times), so the percentile is over
      -- changes, not runs.
      SELECT r.connection_id, r.band,
             (percentile_cont(0.95) WITHIN GROUP (ORDER BY r.bound_seconds))::float8 AS p95
      FROM ${changeStalenessRecords(bounds)} r JOIN connection c ON c.id = r.connection_id
      CROSS JOIN LATERAL generate_series(1, r.changes)
      WHERE r.started_at <= ${at(query)}
        ${query.connectionId === undefined ? Prisma.empty : Prisma.sql`AND r.connection_id = ${query.connectionId}::uuid`}
        ${dayRangeFilter(query, startedAt)}
      GROUP BY 1, 2
    ), stale_by_connection AS (
      SELECT connection_id, jsonb_object_agg(band, p95) AS stale_p95 FROM stale GROUP BY 1
    ), last_error AS (
      SELECT DISTINCT ON (connection_id) connection_id,
             CONCAT_WS(': ', error_code, error_message) AS last_error, started_at AS last_error_at
      FROM runs WHERE outcome = 'failed'
      ORDER BY connection_id, started_at DESC
    )
    SELECT c.id::text AS connection_id, ${connectionName} AS connection, c.status::text AS status,
           COALESCE(p.runs, 0) + COALESCE(d.runs, 0) AS runs,
           COALESCE(p.succeeded, 0) + COALESCE(d.succeeded, 0) AS succeeded,
           COALESCE(p.superseded, 0) + COALESCE(d.superseded, 0) AS superseded,
           COALESCE(p.interrupted, 0) + COALESCE(d.interrupted, 0) AS interrupted,
           p.median_seconds, p.p95_seconds,
           (COALESCE(p.calls, 0) + COALESCE(d.calls, 0))
             / NULLIF(COALESCE(p.attempts, 0) + COALESCE(d.attempts, 0), 0) AS calls_per_run,
           s.stale_p95, e.last_error, e.last_error_at
    FROM connection c
    LEFT JOIN per_connection p ON p.connection_id = c.id
    LEFT JOIN rolled_up d ON d.connection_id = c.id
    LEFT JOIN stale_by_connection s ON s.connection_id = c.id
    LEFT JOIN last_error e ON e.connection_id = c.id
    ${connectionFilter}
    ORDER BY connection, c.id`);
}
