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
// - In each connection's own zone, its stored days (store/sync-health-days.ts) are read from running totals:
//   the same figures, counted while the runs were kept (so durations, staleness and the last error of runs
//   pruned since are still in them, each run on its local day), the percentiles from histograms. The days after
//   them are read, where the range holds all of them, from the connection's day so far (store/sync-health-so-far.ts:
//   what their runs came to as of the retention run's last snapshot) and the runs that snapshot did not see.
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
import { changeStalenessRecords, syncRunRecords } from './history-records.js';
import {
  countValuesOf,
  DURATION_HISTOGRAM,
  lastStoredDay,
  rangeHoldsDaySoFar,
  rolledUpDays,
  soFarHolds,
  SYNC_HEALTH_COUNTS,
  syncHealthBounds,
  syncHealthFigures,
  type SyncHealthCounts,
  type SyncHealthFigures,
} from './sync-health-figures.js';
import { HistogramSums } from '../../lib/log-histogram.js';
import { TOTALS_COLUMN_NAMES, TOTALS_COLUMNS, type StoredTotalsRow } from '../sync-health-days.js';
import { readsStoredDays, STORED_ZONE } from './stored-days.js';
import type { ReportScope } from './report-scope.js';
import { at, connectionFilter, connectionName, dayRangeFilter, type ReportDb } from './report-sql.js';

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

/** The rows computed from every run of the range (and the rollup of those pruned): exact. */
async function computedSyncHealthRows(prisma: ReportDb, query: ReportScope): Promise<SyncHealthRow[]> {
  const startedAt = Prisma.sql`r.started_at`;
  const bounds = syncHealthBounds(query);
  return prisma.$queryRaw<SyncHealthRow[]>(Prisma.sql`
    WITH runs AS (
      SELECT r.connection_id, r.outcome, r.started_at, r.error_code, r.error_message, r.upstream_calls, r.seconds
      FROM ${syncRunRecords(bounds)} r JOIN connection c ON c.id = r.connection_id
      WHERE r.started_at <= ${at(query)}
        ${connectionFilter(query, Prisma.sql`r.connection_id`)} ${dayRangeFilter(query, startedAt)}
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
        ${connectionFilter(query, Prisma.sql`r.connection_id`)} ${dayRangeFilter(query, startedAt)}
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
    WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}
    ORDER BY connection, c.id`);
}

/** A connection as the stored path lists it: in the report's order, with its totals where days are stored. */
interface ListedConnection {
  connection_id: string;
  connection: string;
  status: string;
  stored: boolean;
  /** The running total through the range's last stored day, and through the day before its first. */
  through_end: StoredTotalsRow | null;
  before_start: StoredTotalsRow | null;
  /** Its day so far (sync-health-so-far.ts), where one holds for the report and its range holds all of it. */
  so_far: StoredTotalsRow | null;
}

/** Each stored column and the name a listing reads it under, for the totals it reads as `alias`. */
const listedColumns = (alias: string) =>
  TOTALS_COLUMN_NAMES.map((column) => [column, `${alias}_${column}`] as const);
const THROUGH_END = listedColumns('e');
const BEFORE_START = listedColumns('b');
const SO_FAR = listedColumns('h');

/** The stored row a listing read under `columns`' names, or null where it found none. */
function totalsRowAt(
  row: Record<string, unknown>,
  columns: ReturnType<typeof listedColumns>,
): StoredTotalsRow | null {
  // A loop rather than Object.fromEntries: two a connection, for every connection of the report.
  const stored: Record<string, unknown> = {};
  for (const [column, listedAs] of columns) stored[column] = row[listedAs];
  return stored.attempts === null || stored.attempts === undefined
    ? null
    : (stored as unknown as StoredTotalsRow);
}

/**
 * The query's connections, each with its stored running totals around the range (sync-health-days.ts): the last
 * at or before the range's last stored day, and the last before its first day (never past the other). Read as
 * plain columns: as JSON they took twice as long.
 */
async function listedConnections(db: ReportDb, query: ReportScope): Promise<ListedConnection[]> {
  const endDay = Prisma.sql`LEAST(${lastStoredDay(query)}, ${query.to ?? null}::date)`;
  const startDay =
    query.from === undefined ? undefined : Prisma.sql`LEAST(${endDay}, ${query.from}::date - 1)`;
  const totalsThrough = (day: Prisma.Sql | undefined, alias: string) =>
    day === undefined
      ? Prisma.sql`LEFT JOIN LATERAL (SELECT ${TOTALS_COLUMNS} FROM sync_health_day h WHERE FALSE) ${Prisma.raw(alias)} ON TRUE`
      : Prisma.sql`LEFT JOIN LATERAL (
          SELECT ${TOTALS_COLUMNS} FROM sync_health_day h
          WHERE s.sync_health_through IS NOT NULL AND h.connection_id = c.id AND h.day <= ${day}
          ORDER BY h.day DESC LIMIT 1
        ) ${Prisma.raw(alias)} ON TRUE`;
  const selected = (alias: string, columns: ReturnType<typeof listedColumns>) =>
    Prisma.raw(columns.map(([column, listedAs]) => `${alias}.${column} AS "${listedAs}"`).join(', '));
  const rows = await db.$queryRaw<Record<string, unknown>[]>(Prisma.sql`
    SELECT c.id::text AS connection_id, ${connectionName} AS connection, c.status::text AS status,
           s.sync_health_through IS NOT NULL AS stored, ${selected('e', THROUGH_END)}, ${selected('b', BEFORE_START)},
           ${selected('h', SO_FAR)}
    FROM connection c LEFT JOIN report_days_stored s ON s.connection_id = c.id AND s.zone = ${STORED_ZONE}
    ${totalsThrough(endDay, 'e')} ${totalsThrough(startDay, 'b')}
    LEFT JOIN sync_health_so_far h
      ON h.connection_id = c.id AND ${soFarHolds(query)} AND ${rangeHoldsDaySoFar(query)}
    WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}
    ORDER BY connection, c.id`);
  return rows.map((row) => ({
    connection_id: row.connection_id as string,
    connection: row.connection as string,
    status: row.status as string,
    stored: row.stored as boolean,
    through_end: totalsRowAt(row, THROUGH_END),
    before_start: totalsRowAt(row, BEFORE_START),
    so_far: totalsRowAt(row, SO_FAR),
  }));
}

/** What the days after a connection's stored ones came to: its day so far, where one holds, and the runs counted. */
interface DaysAfterStored {
  soFar: StoredTotalsRow | null;
  counted: SyncHealthFigures | undefined;
}

/** The later of two last errors, `b`'s on a tie (the runs a day so far did not see, after the ones it counted). */
function laterError(
  a: { at: Date; text: string | null } | undefined,
  b: { at: Date; text: string | null } | undefined,
) {
  return a === undefined || (b !== undefined && b.at >= a.at) ? b : a;
}

const errorOf = (text: string | null, at: Date | string | null) =>
  at === null ? undefined : { at: new Date(at), text };

/**
 * A stored connection's row: its range's totals (stored days: the total through its end less the one before its
 * start; and `after`: the days after them) as the report prints them. The histograms are added up in `sums`,
 * reused from one connection to the next.
 */
function rowFromTotals(listed: ListedConnection, after: DaysAfterStored, sums: HistogramSums): SyncHealthRow {
  const { through_end: end, before_start: before } = listed;
  const { soFar, counted } = after;
  const counts = {} as SyncHealthCounts;
  for (const count of SYNC_HEALTH_COUNTS)
    counts[count] =
      (end?.[count] ?? 0) - (before?.[count] ?? 0) + (soFar?.[count] ?? 0) + (counted?.[count] ?? 0);
  sums.clear();
  sums.addBytes(end?.histograms);
  sums.addBytes(before?.histograms, -1);
  sums.addBytes(soFar?.histograms);
  if (counted) countValuesOf(counted, (name, value, count) => sums.addValue(name, value, count));
  // The latest failure in range: the days after the stored ones', else the stored total's unless it was
  // already the total's before the range began.
  const endError = errorOf(end?.last_error ?? null, end?.last_error_at ?? null);
  const beforeErrorAt = before?.last_error_at ? new Date(before.last_error_at) : undefined;
  const storedError =
    endError && !(beforeErrorAt && beforeErrorAt.getTime() >= endError.at.getTime()) ? endError : undefined;
  const afterError = laterError(
    errorOf(soFar?.last_error ?? null, soFar?.last_error_at ?? null),
    errorOf(counted?.last_error ?? null, counted?.last_error_at ?? null),
  );
  const lastError = afterError ?? storedError;
  const [median_seconds = null, p95_seconds = null] = sums.percentiles(DURATION_HISTOGRAM, [0.5, 0.95]);
  const staleBands = sums.names().filter((name) => name !== DURATION_HISTOGRAM);
  return {
    connection_id: listed.connection_id,
    connection: listed.connection,
    status: listed.status,
    runs: counts.succeeded + counts.failed,
    succeeded: counts.succeeded,
    superseded: counts.superseded,
    interrupted: counts.interrupted,
    median_seconds,
    p95_seconds,
    calls_per_run: counts.attempts === 0 ? null : counts.calls / counts.attempts,
    stale_p95:
      staleBands.length === 0
        ? null
        : Object.fromEntries(staleBands.map((band) => [band, sums.percentiles(band, [0.95])[0]!])),
    last_error: lastError?.text ?? null,
    last_error_at: lastError?.at ?? null,
  };
}

/**
 * sync-health's rows. In each connection's own zone, a connection with days stored is read from its running
 * totals (two rows) and the days after them (its day so far and the runs since, where it has one; else their
 * runs); its median, p95 and staleness p95 come from histograms (within lib/log-histogram.ts's RELATIVE_ERROR of the
 * exact ones), the rest exactly. The others, and every
 * connection under --tz, are computed from their runs.
 */
export async function syncHealthRows(db: ReportDb, query: ReportScope): Promise<SyncHealthRow[]> {
  if (!readsStoredDays(query)) return computedSyncHealthRows(db, query);
  const listed = await listedConnections(db, query);
  const storedIds = listed.filter((row) => row.stored).map((row) => row.connection_id);
  if (storedIds.length === 0) return computedSyncHealthRows(db, query);
  const unstoredIds = listed.filter((row) => !row.stored).map((row) => row.connection_id);
  const exact =
    unstoredIds.length === 0
      ? []
      : await computedSyncHealthRows(db, { ...query, connectionBatch: unstoredIds });
  const after = await daysAfterStored(
    db,
    query,
    listed.filter((row) => row.stored),
  );
  const exactById = new Map(exact.map((row) => [row.connection_id, row]));
  const sums = new HistogramSums();
  return listed.map((row) =>
    row.stored
      ? rowFromTotals(row, { soFar: row.so_far, counted: after.get(row.connection_id) }, sums)
      : exactById.get(row.connection_id)!,
  );
}

/**
 * The runs of the days after the stored ones, counted by connection: those its day so far did not see, where one
 * holds, else every run of those days.
 */
async function daysAfterStored(
  db: ReportDb,
  query: ReportScope,
  stored: readonly ListedConnection[],
): Promise<Map<string, SyncHealthFigures>> {
  const withSoFar = stored.filter((row) => row.so_far !== null).map((row) => row.connection_id);
  const without = stored.filter((row) => row.so_far === null).map((row) => row.connection_id);
  const since = (ids: string[], unseen: boolean) =>
    ids.length === 0
      ? []
      : syncHealthFigures(
          db,
          { ...query, connectionBatch: ids },
          { byDay: false, afterStored: true, unseen },
        );
  const figures = [...(await since(withSoFar, true)), ...(await since(without, false))];
  return new Map(figures.map((row) => [row.connection_id, row]));
}
