// sync-health's figures in the form that adds up across days: runs by outcome, upstream calls, the last error,
// and log-bucket histograms (lib/log-histogram.ts) of run durations and of staleness per date band, per
// connection (and local day, when stored: store/sync-health-days.ts). Counted over the same runs as the report
// computes exactly (sync-health-rows.ts): runs started by T on a local day in range, and the daily rollup of runs
// retention pruned, on their UTC day.
import { Prisma } from '../../generated/prisma/client.js';
import { histogramOf, RATIO, SMALLEST, type Histograms } from '../../lib/log-histogram.js';
import { changeStalenessRecords, syncRunRecords, type HistoryBounds } from './history-records.js';
import type { ReportScope } from './report-scope.js';
import { laterOf, MIDNIGHT_MARGIN, STORED_ZONE } from './stored-days.js';
import {
  at,
  connectionFilter,
  dayRangeFilter,
  dayRangeInstants,
  localDay,
  zoneOf,
  type ReportDb,
} from './report-sql.js';

/** The histogram of run durations; staleness's are named by their date band. */
export const DURATION_HISTOGRAM = 'duration';

/** The figures that add up across days: runs by outcome, all runs (attempts) and their upstream calls. */
export const SYNC_HEALTH_COUNTS = [
  'succeeded',
  'failed',
  'superseded',
  'interrupted',
  'attempts',
  'calls',
] as const;
export type SyncHealthCounts = Record<(typeof SYNC_HEALTH_COUNTS)[number], number>;

export interface SyncHealthFigures extends SyncHealthCounts {
  connection_id: string;
  /** The local day, when counted by day; null otherwise. */
  day: string | null;
  /** Histogram name → bucket key → count. */
  histograms: Record<string, Record<string, number>> | null;
  last_error: string | null;
  last_error_at: Date | null;
}

/** The bucket key of an SQL number, as lib/log-histogram.ts's bucketKey computes it. */
function bucketKeySql(value: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`CASE WHEN ${value} >= ${SMALLEST}::float8
    THEN 1 + ceil(ln(${value} / ${SMALLEST}::float8) / ln(${RATIO}::float8))::int ELSE 0 END`;
}

/**
 * What sync-health reads of the history (history-records.ts): the query's connections' runs started by T in its
 * days, from `startsFrom` (packed days before it are skipped).
 */
export function syncHealthBounds(
  query: ReportScope,
  startsFrom: Prisma.Sql | undefined = dayRangeInstants(query).from,
): HistoryBounds {
  const until = dayRangeInstants(query).until;
  return {
    connectionId: query.connectionId,
    ...(query.connectionBatch === undefined
      ? {}
      : { connectionIds: Prisma.sql`${query.connectionBatch}::uuid[]` }),
    startsFrom,
    startsUntil: until === undefined ? at(query) : Prisma.sql`LEAST(${at(query)}, ${until})`,
  };
}

/**
 * Which sync_run_daily rows (alias `d`) count: the query's connections', their UTC day in --from/--to (all the
 * rollup knows of a run's day) and ended by T.
 */
export function rolledUpDays(query: ReportScope): Prisma.Sql {
  const conditions = [
    Prisma.sql`((d.day + 1)::timestamp AT TIME ZONE 'UTC') <= ${at(query)}`,
    ...(query.from === undefined ? [] : [Prisma.sql`d.day >= ${query.from}::date`]),
    ...(query.to === undefined ? [] : [Prisma.sql`d.day <= ${query.to}::date`]),
  ];
  return Prisma.sql`${Prisma.join(conditions, ' AND ')} ${connectionFilter(query, Prisma.sql`d.connection_id`)}`;
}

/**
 * The last stored day (report_days_stored alias `s`, its sync_health_through) a report at T reads: the stored ones before T's own day, which
 * is counted from its runs (a report as of a past instant counts that day's runs up to it).
 */
export function lastStoredDay(query: ReportScope): Prisma.Sql {
  return Prisma.sql`LEAST(s.sync_health_through, ${localDay(query, at(query))} - 1)`;
}

/**
 * Postgres's reading of the midnight that ends connection `c`'s stored days (`s`), within MIDNIGHT_MARGIN of the
 * real one.
 */
const unstoredMidnight = (query: ReportScope) =>
  Prisma.sql`(${lastStoredDay(query)} + 1)::timestamp AT TIME ZONE ${zoneOf(query)}`;

/**
 * The earliest instant a day after connection `c`'s stored ones (`s`) can start, as unstoredParts (stored-days.ts)
 * bounds the days it computes.
 */
const firstUnstoredInstant = (query: ReportScope) =>
  Prisma.sql`${unstoredMidnight(query)} - ${MIDNIGHT_MARGIN}`;

/** Connections (`c`) with sync-health's days stored (`s`) in their current zone, as stored-days.ts reads them. */
const WITH_DAYS_STORED = Prisma.sql`connection c JOIN report_days_stored s
  ON s.connection_id = c.id AND s.zone = ${STORED_ZONE} AND s.sync_health_through IS NOT NULL`;

/**
 * firstUnstoredInstant over the query's connections, so that the history read skips the stored days (a connection
 * one day behind reads a day, not its year); -infinity (never NULL, which would keep nothing) when one of them has
 * no days stored.
 */
function afterStoredFrom(query: ReportScope): Prisma.Sql {
  return Prisma.sql`(
    SELECT CASE WHEN bool_and(s.sync_health_through IS NOT NULL) THEN MIN(${firstUnstoredInstant(query)})
                ELSE '-infinity'::timestamptz END
    FROM connection c LEFT JOIN report_days_stored s ON s.connection_id = c.id AND s.zone = ${STORED_ZONE}
    WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)})`;
}

/**
 * Per packed day (alias h), firstUnstoredInstant of its own connection (-infinity where it has none stored), so
 * that a connection whose days are stored through yesterday skips its packed runs of yesterday's UTC day that
 * precede its midnight.
 */
function afterStoredFromOwn(query: ReportScope): Prisma.Sql {
  return Prisma.sql`COALESCE((
    SELECT ${firstUnstoredInstant(query)} FROM ${WITH_DAYS_STORED} WHERE c.id = h.connection_id
  ), '-infinity'::timestamptz)`;
}

export interface FiguresOptions {
  /** One row per connection and local day, rather than per connection. */
  byDay: boolean;
  /**
   * Only days after the ones stored: joins each connection's lastStoredDay as `s.stored_through`
   * (report_days_stored in the connection's current zone, as stored-days.ts reads it) and keeps the days after
   * it, or every day where sync-health has none stored.
   */
  afterStored?: boolean;
  /** Only days up to this SQL date (over alias `c`). */
  through?: Prisma.Sql;
}

export async function syncHealthFigures(
  db: ReportDb,
  query: ReportScope,
  options: FiguresOptions,
): Promise<SyncHealthFigures[]> {
  const startsFrom = options.afterStored
    ? laterOf(dayRangeInstants(query).from, afterStoredFrom(query))
    : dayRangeInstants(query).from;
  const bounds = {
    ...syncHealthBounds(query, startsFrom),
    ...(options.afterStored ? { packedRunsFrom: afterStoredFromOwn(query) } : {}),
  };
  const runDay = localDay(query, Prisma.sql`r.started_at`);
  // Each connection's last stored day and the instants around the midnight after it, worked out once a connection
  // rather than once a run (they read T's day in the connection's zone); none where sync-health has no days stored
  // for it.
  const stored = options.afterStored
    ? Prisma.sql`LEFT JOIN (
        SELECT c.id AS connection_id, ${lastStoredDay(query)} AS stored_through,
               ${firstUnstoredInstant(query)} AS maybe_after,
               ${unstoredMidnight(query)} + ${MIDNIGHT_MARGIN} AS surely_after
        FROM ${WITH_DAYS_STORED} WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}
      ) s ON s.connection_id = c.id`
    : Prisma.empty;
  const dayConditions = (day: Prisma.Sql) =>
    Prisma.join(
      [
        Prisma.empty,
        ...(options.afterStored ? [Prisma.sql`(s.stored_through IS NULL OR ${day} > s.stored_through)`] : []),
        ...(options.through ? [Prisma.sql`${day} <= ${options.through}`] : []),
      ],
      ' AND ',
    );
  // The same of a run (alias r), its local day worked out only within MIDNIGHT_MARGIN of the midnight after the
  // stored days: before that a run is on a stored day, after it on a later one. One expression, so that Postgres
  // keeps its order (3.4 million runs of 10,000 connections' day so far: two zone conversions each, ~3 s, before).
  const runConditions = Prisma.join(
    [
      Prisma.empty,
      ...(options.afterStored
        ? [
            Prisma.sql`(s.stored_through IS NULL OR (r.started_at >= s.maybe_after
              AND (r.started_at >= s.surely_after OR ${runDay} > s.stored_through)))`,
          ]
        : []),
      ...(options.through ? [Prisma.sql`${runDay} <= ${options.through}`] : []),
    ],
    ' AND ',
  );
  const day = options.byDay ? Prisma.sql`r.day` : Prisma.sql`NULL::date`;
  const rolledDay = options.byDay ? Prisma.sql`d.day` : Prisma.sql`NULL::date`;
  const rows = await db.$queryRaw<SyncHealthFigures[]>(Prisma.sql`
    WITH runs AS (
      SELECT r.connection_id, ${options.byDay ? runDay : Prisma.sql`NULL::date`} AS day, r.outcome, r.started_at,
             r.error_code, r.error_message, r.upstream_calls, r.seconds
      FROM ${syncRunRecords(bounds)} r JOIN connection c ON c.id = r.connection_id ${stored}
      WHERE r.started_at <= ${at(query)} ${connectionFilter(query, Prisma.sql`r.connection_id`)}
        ${dayRangeFilter(query, Prisma.sql`r.started_at`)} ${runConditions}
    ), counts AS (
      SELECT connection_id, ${day} AS day,
             (COUNT(*) FILTER (WHERE outcome = 'succeeded'))::int AS succeeded,
             (COUNT(*) FILTER (WHERE outcome = 'failed'))::int AS failed,
             (COUNT(*) FILTER (WHERE outcome = 'superseded'))::int AS superseded,
             (COUNT(*) FILTER (WHERE outcome = 'interrupted'))::int AS interrupted,
             COUNT(*)::int AS attempts, COALESCE(SUM(upstream_calls), 0)::float8 AS calls
      FROM runs r GROUP BY 1, 2
    ), rolled_up AS (
      SELECT d.connection_id, ${rolledDay} AS day,
             (COALESCE(SUM(d.runs) FILTER (WHERE d.outcome = 'succeeded'), 0))::int AS succeeded,
             (COALESCE(SUM(d.runs) FILTER (WHERE d.outcome = 'failed'), 0))::int AS failed,
             (COALESCE(SUM(d.runs) FILTER (WHERE d.outcome = 'superseded'), 0))::int AS superseded,
             (COALESCE(SUM(d.runs) FILTER (WHERE d.outcome = 'interrupted'), 0))::int AS interrupted,
             SUM(d.runs)::int AS attempts, COALESCE(SUM(d.upstream_calls), 0)::float8 AS calls
      FROM sync_run_daily d JOIN connection c ON c.id = d.connection_id ${stored}
      WHERE ${rolledUpDays(query)}
        ${startsFrom === undefined ? Prisma.empty : Prisma.sql`AND d.day >= (${startsFrom} AT TIME ZONE 'UTC')::date`}
        ${dayConditions(Prisma.sql`d.day`)}
      GROUP BY 1, 2
    ), totals AS (
      SELECT connection_id, day, SUM(succeeded)::int AS succeeded, SUM(failed)::int AS failed,
             SUM(superseded)::int AS superseded, SUM(interrupted)::int AS interrupted,
             SUM(attempts)::int AS attempts, SUM(calls)::float8 AS calls
      FROM (SELECT * FROM counts UNION ALL SELECT * FROM rolled_up) t GROUP BY 1, 2
    ), buckets AS (
      SELECT connection_id, ${day} AS day, ${DURATION_HISTOGRAM}::text AS name, ${bucketKeySql(Prisma.sql`r.seconds`)} AS key,
             COUNT(*)::int AS n
      FROM runs r WHERE r.seconds IS NOT NULL GROUP BY 1, 2, 3, 4
      UNION ALL
      -- Each change counts once (n changes of one band and bound count n times), as the exact percentile does.
      SELECT r.connection_id, ${options.byDay ? runDay : Prisma.sql`NULL::date`}, r.band,
             ${bucketKeySql(Prisma.sql`r.bound_seconds`)}, SUM(r.changes)::int
      FROM ${changeStalenessRecords(bounds)} r JOIN connection c ON c.id = r.connection_id ${stored}
      WHERE r.started_at <= ${at(query)} ${connectionFilter(query, Prisma.sql`r.connection_id`)}
        ${dayRangeFilter(query, Prisma.sql`r.started_at`)} ${runConditions}
      GROUP BY 1, 2, 3, 4
    ), histograms AS (
      SELECT connection_id, day, jsonb_object_agg(name, keys) AS histograms
      FROM (SELECT connection_id, day, name, jsonb_object_agg(key::text, n) AS keys
            FROM buckets WHERE n > 0 GROUP BY 1, 2, 3) h
      GROUP BY 1, 2
    ), last_error AS (
      SELECT DISTINCT ON (connection_id, day) connection_id, ${day} AS day,
             CONCAT_WS(': ', error_code, error_message) AS last_error, started_at AS last_error_at
      FROM runs r WHERE outcome = 'failed'
      ORDER BY connection_id, day, started_at DESC
    )
    SELECT t.connection_id::text AS connection_id, t.day::text AS day, t.succeeded, t.failed, t.superseded,
           t.interrupted, t.attempts, t.calls, h.histograms, e.last_error, e.last_error_at
    FROM totals t
    LEFT JOIN histograms h ON h.connection_id = t.connection_id AND h.day IS NOT DISTINCT FROM t.day
    LEFT JOIN last_error e ON e.connection_id = t.connection_id AND e.day IS NOT DISTINCT FROM t.day
    ORDER BY t.connection_id, t.day`);
  return rows;
}

/** A row's histograms as lib/log-histogram.ts keeps them. */
export function histogramsOf(figures: Pick<SyncHealthFigures, 'histograms'>): Histograms {
  return new Map(
    Object.entries(figures.histograms ?? {}).map(([name, keys]) => [
      name,
      histogramOf(Object.entries(keys).map(([key, count]) => [Number(key), count] as const)),
    ]),
  );
}
