// sync-health's figures in the form that adds up across days: runs by outcome, upstream calls, the last error,
// and log-bucket histograms (lib/log-histogram.ts) of run durations and of staleness per date band, per
// connection (and local day, when stored: store/sync-health-days.ts). Counted over the same runs as the report
// computes exactly (sync-health-rows.ts): runs started by T on a local day in range, and the daily rollup of runs
// retention pruned, on their UTC day.
import { Prisma } from '../../generated/prisma/client.js';
import { bucketKey, histogramOf, type Histograms } from '../../lib/log-histogram.js';
import {
  changeStalenessRecords,
  EACH_STALENESS_ENTRY,
  STALENESS_ENTRY,
  syncRunRecords,
  type HistoryBounds,
} from './history-records.js';
import type { ReportScope } from './report-scope.js';
import { laterOf, MIDNIGHT_MARGIN, STORED_ZONE } from './stored-days.js';
import {
  at,
  connectionFilter,
  dayColumnInRange,
  dayRangeFilter,
  dayRangeInstants,
  localDay,
  WORKED_OUT_ONCE,
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
  /** The durations of the runs, in seconds (null: none), which countValuesOf gives to be counted into buckets. */
  durations: number[] | null;
  /** The staleness of the changes successful runs stored: each entry's band, bound in seconds and changes. */
  stale_bands: string[] | null;
  stale_bounds: number[] | null;
  stale_changes: number[] | null;
  last_error: string | null;
  last_error_at: Date | null;
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
    ...dayColumnInRange(query, Prisma.sql`d.day`),
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

/**
 * Whether connection `c`'s day so far (alias h, LEFT JOINed; its report_days_stored row `s`) holds for a
 * report or a count at `query.at`: counted in the connection's zone, after the days a report reads as stored, and
 * no later than the report's instant.
 */
export function soFarHolds(query: ReportScope): Prisma.Sql {
  return Prisma.sql`(h.connection_id IS NOT NULL AND h.zone = ${STORED_ZONE}
    AND h.stored_through = ${lastStoredDay(query)} AND h.counted_at <= ${at(query)})`;
}

/**
 * Whether a report's range holds the whole of connection `c`'s days after its stored ones (so that it may add their
 * day so far): from no later than the first, to no earlier than the report's own day.
 */
export function rangeHoldsDaySoFar(query: ReportScope): Prisma.Sql {
  const conditions = [
    ...(query.from === undefined ? [] : [Prisma.sql`${query.from}::date <= h.stored_through + 1`]),
    ...(query.to === undefined ? [] : [Prisma.sql`${query.to}::date >= ${localDay(query, at(query))}`]),
  ];
  return conditions.length === 0 ? Prisma.sql`TRUE` : Prisma.join(conditions, ' AND ');
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
  /**
   * With afterStored: only the runs each connection's day so far (sync_health_so_far, sync-health-so-far.ts) did not
   * count: live runs started after its count, or written by a transaction its snapshot did not see. Every
   * connection of the query must have one that holds (soFarHolds, rangeHoldsDaySoFar): a batch of them.
   */
  unseen?: boolean;
}

/** What a day so far (alias h) saw: its snapshot and the instant it counted up to, as unseenRuns reads them. */
const SEEN_BY_THE_DAY_SO_FAR = Prisma.sql`, h.snapshot::pg_snapshot AS seen_snapshot, h.counted_at AS seen_at`;

/**
 * Live runs (alias r, with the day so far joined as `s`) that the day so far did not count, and a bound on the
 * same over the query's connections that Postgres can read sync_run's indexes by: what a snapshot did not see was
 * written at or after its xmin.
 */
function unseenRuns(query: ReportScope): { run: Prisma.Sql; bound: Prisma.Sql } {
  const counted = Prisma.sql`FROM sync_health_so_far h JOIN connection c ON c.id = h.connection_id
    WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}`;
  return {
    run: Prisma.sql`(r.started_at > s.seen_at
      OR (r.recorded_xid IS NOT NULL AND NOT pg_visible_in_snapshot(r.recorded_xid::text::xid8, s.seen_snapshot)))`,
    bound: Prisma.sql`(r.recorded_xid >= (
        SELECT MIN(pg_snapshot_xmin(h.snapshot::pg_snapshot)::text::bigint) ${counted})
      OR r.started_at > (SELECT MIN(h.counted_at) ${counted}))`,
  };
}

export async function syncHealthFigures(
  db: ReportDb,
  query: ReportScope,
  options: FiguresOptions,
): Promise<SyncHealthFigures[]> {
  const startsFrom = options.afterStored
    ? laterOf(dayRangeInstants(query).from, afterStoredFrom(query))
    : dayRangeInstants(query).from;
  const unseen = options.afterStored && options.unseen ? unseenRuns(query) : undefined;
  const bounds = {
    ...syncHealthBounds(query, startsFrom),
    ...(options.afterStored ? { packedRunsFrom: afterStoredFromOwn(query) } : {}),
    ...(unseen ? { liveOnly: true } : {}),
  };
  const runDay = localDay(query, Prisma.sql`r.started_at`);
  // The query's connections themselves, not only their rows: Postgres may work a connection's zone into the key of
  // an index scan of its rows (a day's bound, in the rolled-up runs) before it finds whether the connection has
  // any, so a connection outside the query, in a zone Postgres lacks, failed it (a run storing one connection's
  // days failed on another's; test/reports/report-days.test.ts).
  const queryConnections = Prisma.sql`(SELECT * FROM connection c WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}) c`;
  // Each connection's last stored day and the instants around the midnight after it, worked out once a connection
  // rather than once a run (they read T's day in the connection's zone); none where sync-health has no days stored
  // for it. Where it carries the day so far (unseen), it is worked out once: merged into the join with the runs,
  // Postgres expected a hundred of 10,000 connections' days so far and looked each run's up by index (an hour's
  // 180,000 runs: 0.47 s to read, 0.21-0.26 s this way).
  const stored = options.afterStored
    ? Prisma.sql`LEFT JOIN (
        SELECT c.id AS connection_id, ${lastStoredDay(query)} AS stored_through,
               ${firstUnstoredInstant(query)} AS maybe_after,
               ${unstoredMidnight(query)} + ${MIDNIGHT_MARGIN} AS surely_after
               ${unseen ? SEEN_BY_THE_DAY_SO_FAR : Prisma.empty}
        FROM ${WITH_DAYS_STORED}
        -- Joined by connection alone: the conditions of soFarHolds here made Postgres expect one connection of
        -- thousands and read each one's runs of the day by index (1.1 s for 10,000, against 0.1 s by the bound).
        ${unseen ? Prisma.sql`JOIN sync_health_so_far h ON h.connection_id = c.id` : Prisma.empty}
        WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}
        ${unseen ? WORKED_OUT_ONCE : Prisma.empty}
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
      ...(unseen ? [unseen.run, unseen.bound] : []),
    ],
    ' AND ',
  );
  const day = options.byDay ? Prisma.sql`r.day` : Prisma.sql`NULL::date`;
  // The staleness of the changes the runs stored: read again in the history's form (live or packed), or, where the
  // runs are all live (the unseen ones), from what the runs read (an hour's 180,000 runs: 0.65 s read again, 0.13 s
  // from the runs).
  const staleness = () => Prisma.sql`(
    SELECT r.connection_id, ${options.byDay ? runDay : Prisma.sql`NULL::date`} AS day, r.band, r.bound_seconds,
           r.changes
    FROM ${changeStalenessRecords(bounds)} r JOIN ${queryConnections} ON c.id = r.connection_id ${stored}
    WHERE r.started_at <= ${at(query)} ${connectionFilter(query, Prisma.sql`r.connection_id`)}
      ${dayRangeFilter(query, Prisma.sql`r.started_at`)} ${runConditions})`;
  const unseenStaleness = Prisma.sql`(
    SELECT r.connection_id, r.day, ${STALENESS_ENTRY} FROM runs r ${EACH_STALENESS_ENTRY}
    WHERE r.outcome = 'succeeded')`;
  const rolledDay = options.byDay ? Prisma.sql`d.day` : Prisma.sql`NULL::date`;
  const rows = await db.$queryRaw<SyncHealthFigures[]>(Prisma.sql`
    WITH runs AS (
      SELECT r.connection_id, ${options.byDay ? runDay : Prisma.sql`NULL::date`} AS day, r.outcome, r.started_at,
             r.error_code, r.error_message, r.upstream_calls, r.seconds
             ${unseen ? Prisma.sql`, r.change_staleness` : Prisma.empty}
      FROM ${syncRunRecords(bounds)} r JOIN ${queryConnections} ON c.id = r.connection_id ${stored}
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
      FROM sync_run_daily d JOIN ${queryConnections} ON c.id = d.connection_id ${stored}
      WHERE ${rolledUpDays(query)} ${unseen ? Prisma.sql`AND FALSE` : Prisma.empty}
        ${startsFrom === undefined ? Prisma.empty : Prisma.sql`AND d.day >= (${startsFrom} AT TIME ZONE 'UTC')::date`}
        ${dayConditions(Prisma.sql`d.day`)}
      GROUP BY 1, 2
    ), totals AS (
      SELECT connection_id, day, SUM(succeeded)::int AS succeeded, SUM(failed)::int AS failed,
             SUM(superseded)::int AS superseded, SUM(interrupted)::int AS interrupted,
             SUM(attempts)::int AS attempts, SUM(calls)::float8 AS calls
      FROM (SELECT * FROM counts UNION ALL SELECT * FROM rolled_up) t GROUP BY 1, 2
    ), durations AS (
      -- The values themselves, counted into buckets in JavaScript: a sort and two JSON aggregates of the bucket
      -- counts here took most of the statement (10 µs a run of the 180,000 since an hour's count).
      SELECT connection_id, ${day} AS day, array_agg(r.seconds) AS durations
      FROM runs r WHERE r.seconds IS NOT NULL GROUP BY 1, 2
    ), stale AS (
      SELECT r.connection_id, ${day} AS day,
             array_agg(r.band) AS stale_bands, array_agg(r.bound_seconds) AS stale_bounds,
             array_agg(r.changes) AS stale_changes
      FROM ${unseen ? unseenStaleness : staleness()} r
      GROUP BY 1, 2
    ), last_error AS (
      SELECT DISTINCT ON (connection_id, day) connection_id, ${day} AS day,
             CONCAT_WS(': ', error_code, error_message) AS last_error, started_at AS last_error_at
      FROM runs r WHERE outcome = 'failed'
      ORDER BY connection_id, day, started_at DESC
    )
    SELECT t.connection_id::text AS connection_id, t.day::text AS day, t.succeeded, t.failed, t.superseded,
           t.interrupted, t.attempts, t.calls, d.durations, st.stale_bands, st.stale_bounds, st.stale_changes,
           e.last_error, e.last_error_at
    FROM totals t
    LEFT JOIN durations d ON d.connection_id = t.connection_id AND d.day IS NOT DISTINCT FROM t.day
    LEFT JOIN stale st ON st.connection_id = t.connection_id AND st.day IS NOT DISTINCT FROM t.day
    LEFT JOIN last_error e ON e.connection_id = t.connection_id AND e.day IS NOT DISTINCT FROM t.day
    ORDER BY t.connection_id, t.day`);
  return rows;
}

/**
 * Each value a row's histograms count (`add`: a histogram's name, the value, how many times): its durations, and
 * each band's staleness (an entry of n changes counts n times, as the exact percentile does).
 */
export function countValuesOf(
  figures: Pick<SyncHealthFigures, 'durations' | 'stale_bands' | 'stale_bounds' | 'stale_changes'>,
  add: (name: string, value: number, count: number) => void,
): void {
  for (const seconds of figures.durations ?? []) add(DURATION_HISTOGRAM, seconds, 1);
  const bands = figures.stale_bands ?? [];
  for (let i = 0; i < bands.length; i++) {
    const changes = figures.stale_changes![i]!;
    if (changes > 0) add(bands[i]!, figures.stale_bounds![i]!, changes);
  }
}

/** A row's histograms as lib/log-histogram.ts keeps them (countValuesOf's values, counted into buckets). */
export function histogramsOf(
  figures: Pick<SyncHealthFigures, 'durations' | 'stale_bands' | 'stale_bounds' | 'stale_changes'>,
): Histograms {
  const pairs = new Map<string, [number, number][]>();
  countValuesOf(figures, (name, value, count) => {
    const named = pairs.get(name) ?? [];
    pairs.set(name, named);
    named.push([bucketKey(value), count]);
  });
  return new Map([...pairs].map(([name, named]) => [name, histogramOf(named)]));
}
