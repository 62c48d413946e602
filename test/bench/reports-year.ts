// Benchmark (issue 43): every report over a year of 10,000 connections' history, generated in bulk directly in
// the form retention leaves it (store/retention.ts, store/history-compaction.ts): the last 180 UTC days of closed
// slots packed a row per connection-day (slot_history), the last 90 days of sync runs packed (sync_run_history),
// the year's runs before them rolled up per day and outcome (sync_run_daily), today's runs up to the bench's
// instant row by row (sync_run: a UTC day is packed once it is over), and a year of bookings row by row.
// A day's shape is the default bands' (growth bench, docs/performance.md): 3 event types, ~237 slots starting on
// a day (5 % taken before they start, the rest passed), 432 runs (2 % failed, 1 % superseded, 30 % of the
// successful ones with the staleness of the changes they stored), ~1.7 bookings. Days are drawn from a pool of
// generated days (BENCH_YEAR_POOL), so generating costs writing the rows, not computing each array.
// Times each report kind over all connections and over one, for the whole history (a year) and for a month,
// against the issue's target of 2 s each; a report that has not answered after BENCH_YEAR_TIMEOUT seconds is
// cancelled by Postgres (statement_timeout) and counted as missed by at least that. Timing is reported, never
// asserted; with BENCH_EXPLAIN=1 the plans of the all-connection reports are printed.
import {
  parseReportQuery,
  type RawReportQuery,
  type ReportName,
  type ReportQuery,
} from '../../src/reports/report-query.js';
import { runReport, runReportCsv } from '../../src/reports/run-report.js';
import { TABLE_ROWS_SHOWN } from '../../src/web/admin/report-pages.js';
import { createPrismaClient } from '../../src/store/prisma-client.js';
import { createReportStore, type ReportStore } from '../../src/store/reports.js';
import { csvRows } from '../../src/store/report-queries/csv-rows.js';
import { AVAILABILITY_TABLES } from '../../src/store/report-queries/availability-days.js';
import { storeReportDays } from '../../src/store/report-days.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { DATE_BANDS } from '../../src/lib/date-bands.js';
import { TOTALS_COLUMN_NAMES } from '../../src/store/sync-health-days.js';
import { check, type BenchSection } from './bench-result.js';
import { loadAverage } from './process-stats.js';
import { storeOnly } from '../support/store-only.js';

const NOW = new Date('2026-09-20T12:00:00Z');
const TODAY = '2026-09-20';
const TARGET_SECONDS = 2;
/**
 * The retention run's last count of the days so far (store/sync-health-so-far.ts): it runs hourly, so a report
 * counts up to an hour of runs after it, and the bench's reports come at the end of such an hour.
 */
const LAST_COUNT = new Date(NOW.getTime() - 3_600_000);
const STORE_ONLY = storeOnly();
/** The retention defaults' ages: packed slot days, packed run days (then rolled up), the rollup's year. */
const SLOT_DAYS = 180;
const RUN_DAYS = 90;
const YEAR_DAYS = 365;
/** The report's date bands, as a sync records its changes' staleness by them. */
const BAND_NAMES = DATE_BANDS.map((band) => band.name);

export interface ReportsYearOptions {
  connections: number;
  slotsPerDay: number;
  runsPerDay: number;
  /** Distinct generated days the year's rows are drawn from. */
  pool: number;
  timeoutSeconds: number;
  /** Connections whose utilization days the retention pass itself stores (timed); the rest copy theirs. */
  storeSample: number;
  /** The reports to time (all four when absent). */
  reports?: ReportName[];
}

const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10;

async function generateConnections(db: TestDatabase, connections: number): Promise<void> {
  await db.sql.query(
    `INSERT INTO connection (id, upstream_user_id, email, timezone, status, first_synced_at, updated_at)
     SELECT gen_random_uuid(), 'usr_' || i, 'user' || lpad(i::text, 5, '0') || '@bench.test',
            (ARRAY['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'])[1 + i % 4],
            (CASE WHEN i % 25 = 0 THEN 'needs_reauth' ELSE 'active' END)::connection_status,
            $2::date - ${YEAR_DAYS + 1}, now()
     FROM generate_series(1, $1::int) i`,
    [connections, TODAY],
  );
  await db.sql.query(
    `INSERT INTO event_type (connection_id, upstream_event_id, title, duration_minutes, enabled, content_hash,
                             payload, valid_from)
     SELECT c.id, 'evt_' || c.upstream_user_id || '_' || e, 'Event ' || e, 30, true, 'hash', '{}'::jsonb,
            '2025-01-01T00:00:00Z'
     FROM connection c, generate_series(1, 3) e`,
  );
}

/** The pool's connection-day for connection `c` (usr_<n>) and day `d`: spreads the pool over both. */
const poolKey = (pool: number) =>
  `(((split_part(c.upstream_user_id, '_', 2)::int * 7 + (d.day - '${TODAY}'::date)) % ${pool}) + ${pool}) % ${pool}`;

/** slot_history for the last SLOT_DAYS days: a pool of packed days, then a row per connection-day from it. */
async function generatePackedSlots(db: TestDatabase, options: ReportsYearOptions): Promise<void> {
  // Slots of 30 minutes on a 5-minute grid between 06:00 and 20:00 UTC; 5 % taken (closed between their first
  // sighting and their start), the rest passed 10 minutes after they started. Ordered as the packing orders them
  // (start, event, first seen). First seen as a sync sees them, at its commit's instant: an event type's day comes
  // into the horizon 28 days ahead, at a sync that day, with nine slots in ten; the rest are added later, each
  // at one of the next 26 days' two-hourly syncs (the default far band's).
  await db.sql.query(
    `CREATE UNLOGGED TABLE bench_slot_pool AS
     WITH horizon AS (
       SELECT k, e, -(27 * 86400000::bigint + floor(random() * 12) * 7200000)::bigint AS seen_at
       FROM generate_series(0, $1::int - 1) k, generate_series(1, 3) e
     ), drawn AS (
       SELECT k, (1 + i % 3)::smallint AS e, (21600000 + floor(random() * 168) * 300000)::int AS start_ms,
              random() AS later, -(1 + floor(random() * 26 * 12)) * 7200000::bigint AS later_at, random() AS r,
              random() AS r2
       FROM generate_series(0, $1::int - 1) k, generate_series(1, $2::int) i
     ), s AS (
       SELECT d.k, d.e, d.start_ms,
              CASE WHEN d.later < 0.1 THEN d.later_at ELSE h.seen_at END - d.start_ms AS seen_ms, d.r, d.r2
       FROM drawn d JOIN horizon h ON h.k = d.k AND h.e = d.e
     ), t AS (
       SELECT k, e, start_ms, seen_ms,
              CASE WHEN r < 0.05 THEN (seen_ms * r2)::bigint ELSE 600000 END AS gone_ms,
              array_position(enum_range(NULL::slot_close_reason),
                             (CASE WHEN r < 0.05 THEN 'taken' ELSE 'passed' END)::slot_close_reason)::smallint AS reason
       FROM s
     )
     SELECT k, MIN(start_ms + seen_ms) AS seen_from_ms, MAX(start_ms + seen_ms) AS seen_until_ms,
            MAX(start_ms + gone_ms) AS gone_until_ms,
            array_agg(e ORDER BY start_ms, e, seen_ms) AS event_index,
            array_agg(start_ms ORDER BY start_ms, e, seen_ms) AS start_ms,
            array_agg(1800000 ORDER BY start_ms, e, seen_ms) AS length_ms,
            array_agg(seen_ms ORDER BY start_ms, e, seen_ms) AS seen_ms,
            array_agg(gone_ms ORDER BY start_ms, e, seen_ms) AS gone_ms,
            array_agg(reason ORDER BY start_ms, e, seen_ms) AS close_reason
     FROM t GROUP BY k`,
    [options.pool, options.slotsPerDay],
  );
  await db.sql.query(
    `INSERT INTO slot_history (connection_id, day, first_seen_from, first_seen_until, gone_until, event_ids,
                               event_index, start_ms, length_ms, seen_ms, gone_ms, close_reason)
     SELECT c.id, d.day, m.midnight + p.seen_from_ms * interval '1 millisecond',
            m.midnight + p.seen_until_ms * interval '1 millisecond',
            m.midnight + p.gone_until_ms * interval '1 millisecond',
            ARRAY['evt_' || c.upstream_user_id || '_1', 'evt_' || c.upstream_user_id || '_2',
                  'evt_' || c.upstream_user_id || '_3'],
            p.event_index, p.start_ms, p.length_ms, p.seen_ms, p.gone_ms, p.close_reason
     FROM connection c
     CROSS JOIN LATERAL (SELECT ('${TODAY}'::date - g)::date AS day FROM generate_series(1, ${SLOT_DAYS}) g) d
     CROSS JOIN LATERAL (SELECT d.day::timestamp AT TIME ZONE 'UTC' AS midnight) m
     JOIN bench_slot_pool p ON p.k = ${poolKey(options.pool)}`,
  );
  await db.sql.query(`DROP TABLE bench_slot_pool`);
}

/** sync_run_history for the last RUN_DAYS days, and sync_run_daily for the year's days before them. */
async function generatePackedRuns(db: TestDatabase, options: ReportsYearOptions): Promise<void> {
  const outcome = (name: string) => `array_position(enum_range(NULL::sync_outcome), '${name}')::smallint`;
  // Runs evenly through the day (jittered by up to a minute), 1–10 s long, 5–15 upstream calls.
  await db.sql.query(
    `CREATE UNLOGGED TABLE bench_run_pool AS
     WITH r AS (
       SELECT k, i, ((i - 1) * (86400000 / $2::int) + floor(random() * 60000))::int AS started_ms,
              (1000 + floor(random() * 9000))::int AS duration_ms, random() AS f, (5 + floor(random() * 11))::int AS calls,
              random() < 0.3 AS changed, (30 + floor(random() * 7200))::float8 AS bound
       FROM generate_series(0, $1::int - 1) k, generate_series(1, $2::int) i
     )
     SELECT k, array_agg(started_ms ORDER BY i) AS started_ms, array_agg(duration_ms ORDER BY i) AS duration_ms,
            array_agg(CASE WHEN f < 0.02 THEN ${outcome('failed')} WHEN f < 0.03 THEN ${outcome('superseded')}
                           ELSE ${outcome('succeeded')} END ORDER BY i) AS outcome,
            array_agg(calls ORDER BY i) AS upstream_calls,
            array_agg(CASE WHEN f < 0.02 THEN 'upstream_5xx' END ORDER BY i) AS error_code,
            array_agg(CASE WHEN f < 0.02 THEN 'GET /events answered 503' END ORDER BY i) AS error_message,
            array_agg(i::smallint ORDER BY i) FILTER (WHERE f >= 0.03 AND changed) AS stale_run,
            array_agg((1 + i % 4)::smallint ORDER BY i) FILTER (WHERE f >= 0.03 AND changed) AS stale_band,
            array_agg(bound ORDER BY i) FILTER (WHERE f >= 0.03 AND changed) AS stale_bound_seconds,
            array_agg((1 + i % 3)::int ORDER BY i) FILTER (WHERE f >= 0.03 AND changed) AS stale_changes,
            jsonb_build_object('GET /calendars/{event_id}/slots', SUM(calls)) AS calls_by_endpoint
     FROM r GROUP BY k`,
    [options.pool, options.runsPerDay],
  );
  await db.sql.query(
    `INSERT INTO sync_run_history (connection_id, day, started_ms, duration_ms, outcome, upstream_calls,
                                   error_code, error_message, stale_band_names, stale_run, stale_band,
                                   stale_bound_seconds, stale_changes, calls_by_endpoint)
     SELECT c.id, d.day, p.started_ms, p.duration_ms, p.outcome, p.upstream_calls, p.error_code, p.error_message,
            $1::text[], p.stale_run, p.stale_band,
            p.stale_bound_seconds, p.stale_changes, p.calls_by_endpoint
     FROM connection c
     CROSS JOIN LATERAL (SELECT ('${TODAY}'::date - g)::date AS day FROM generate_series(1, ${RUN_DAYS}) g) d
     JOIN bench_run_pool p ON p.k = ${poolKey(options.pool)}`,
    [BAND_NAMES],
  );
  await db.sql.query(`DROP TABLE bench_run_pool`);
  await db.sql.query(
    `INSERT INTO sync_run_daily (connection_id, day, outcome, runs, upstream_calls, seconds)
     SELECT c.id, ('${TODAY}'::date - g)::date, o.outcome::sync_outcome, round($1::int * o.share)::int,
            round($1::int * o.share) * 10, round($1::int * o.share) * 5.5
     FROM connection c, generate_series(${RUN_DAYS + 1}, ${YEAR_DAYS}) g,
          (VALUES ('succeeded', 0.97), ('failed', 0.02), ('superseded', 0.01)) o(outcome, share)`,
    [options.runsPerDay],
  );
}

/**
 * Today's runs from `after` up to `until` (the day's start to NOW), row by row in sync_run as a live installation
 * holds them (a UTC day's runs are packed only once it is over): the same shape as a packed day's, each successful
 * run that changed slots with its staleness as the sync commit records it.
 */
async function generateTodaysRuns(
  db: TestDatabase,
  options: ReportsYearOptions,
  after = new Date(`${TODAY}T00:00:00Z`),
  until = NOW,
): Promise<void> {
  await db.sql.query(
    `INSERT INTO sync_run (id, connection_id, started_at, finished_at, outcome, error_code, error_message,
                           upstream_calls, calls_by_endpoint, change_staleness)
     SELECT gen_random_uuid(), c.id, r.started_at, r.started_at + r.seconds * interval '1 second',
            (CASE WHEN r.f < 0.02 THEN 'failed' WHEN r.f < 0.03 THEN 'superseded' ELSE 'succeeded' END)::sync_outcome,
            CASE WHEN r.f < 0.02 THEN 'upstream_5xx' END, CASE WHEN r.f < 0.02 THEN 'GET /events answered 503' END,
            r.calls, jsonb_build_object('GET /calendars/{event_id}/slots', r.calls),
            CASE WHEN r.f >= 0.03 AND r.changed
                 THEN jsonb_build_array(jsonb_build_object('band', ($3::text[])[1 + i % 4], 'boundSeconds', r.bound,
                                                           'changes', 1 + i % 3))
                 ELSE '[]'::jsonb END
     FROM connection c, generate_series(1, $1::int) i,
     -- The WHERE ties the draw to the connection and run: Postgres draws a lateral again only when a column it
     -- refers to changes.
     LATERAL (SELECT '${TODAY}'::timestamp AT TIME ZONE 'UTC'
                       + ((i - 1) * (86400000 / $1::int) + floor(random() * 60000)) * interval '1 millisecond'
                       AS started_at,
                     1 + random() * 9 AS seconds, random() AS f, (5 + floor(random() * 11))::int AS calls,
                     random() < 0.3 AS changed, 30 + floor(random() * 7200) AS bound
              WHERE c.id IS NOT NULL AND i IS NOT NULL) r
     WHERE r.started_at <= $2::timestamptz AND r.started_at >= $4::timestamptz`,
    [options.runsPerDay, until, BAND_NAMES, after],
  );
}

/** A year of bookings, ~1.7 a connection-day, detected by day and made 1–14 days ahead. */
async function generateBookings(db: TestDatabase): Promise<void> {
  await db.sql.query(
    `INSERT INTO booking (connection_id, detected_at, starts_at, ends_at, event_ids, slots_closed)
     SELECT c.id, x.detected, y.starts, y.starts + interval '30 minutes',
            ARRAY['evt_' || c.upstream_user_id || '_' || (1 + n % 3)], 1
     FROM connection c, generate_series(1, ${YEAR_DAYS}) g, generate_series(1, 2) n,
     -- The WHERE ties the draw to the connection and candidate: Postgres draws a lateral again only when a
     -- column it refers to changes.
     LATERAL (SELECT ('${TODAY}'::date - g)::timestamp AT TIME ZONE 'UTC' + (6 + random() * 14) * interval '1 hour'
                AS detected, random() AS r WHERE c.id IS NOT NULL AND n IS NOT NULL) x,
     LATERAL (SELECT date_trunc('hour', x.detected + (1 + random() * 13) * interval '1 day') AS starts) y
     WHERE x.r < 0.85`,
  );
}

/**
 * The report days the retention run stores (utilization's, opened slots', and whole weeks'), as it leaves them: the run itself
 * stores those of `storeSample` connections (usr_1 …, timed: the first run after an upgrade, a connection's whole
 * history at once), and every other connection gets a copy of the days of the sampled one in its zone (usr_n
 * copies usr_(1 + (n − 1) mod sample), the same zone when the sample is a multiple of 4). Seconds per sampled
 * connection.
 */
async function generateStoredReportDays(db: TestDatabase, options: ReportsYearOptions): Promise<number> {
  const sample = (
    await db.sql.query<{ id: string }>(
      `SELECT id::text FROM connection WHERE split_part(upstream_user_id, '_', 2)::int <= $1`,
      [options.storeSample],
    )
  ).rows.map((row) => row.id);
  const prisma = createPrismaClient(db.url);
  const started = performance.now();
  try {
    const { failures } = await storeReportDays(prisma, sample, NOW);
    check(
      failures.length === 0,
      `storing report days failed: ${failures.map((f) => String(f.error)).join('; ')}`,
    );
  } finally {
    await prisma.$disconnect();
  }
  const perConnection = (performance.now() - started) / 1000 / sample.length;
  const copyOf = `1 + (split_part(c.upstream_user_id, '_', 2)::int - 1) % ${options.storeSample}`;
  for (const [table, columns] of [
    ['utilization_day', ['day', 'offered_minutes', 'bookings', 'booked_minutes']],
    ['booking_day', ['day', 'bookings', 'booked_minutes', 'median_lead_hours', 'mean_lead_hours', 'opened']],
    [
      'booking_week',
      ['week', 'bookings', 'booked_minutes', 'median_lead_hours', 'mean_lead_hours', 'opened'],
    ],
    ['sync_health_day', ['day', ...TOTALS_COLUMN_NAMES]],
    ['booking_total_day', ['day', 'bookings', 'booked_ms', 'lead_ms', 'histograms']],
    [
      'report_days_stored',
      [
        'zone',
        'through',
        'sync_health_through',
        'weeks_through',
        'availability_through',
        'availability_ahead',
        'booking_totals_through',
      ],
    ],
  ] as const) {
    await db.sql.query(
      `INSERT INTO ${table} (connection_id, ${columns.join(', ')})
       SELECT c.id, ${columns.map((column) => `u.${column}`).join(', ')}
       FROM connection c
       JOIN connection s ON s.upstream_user_id = 'usr_' || (${copyOf})
       JOIN ${table} u ON u.connection_id = s.id
       WHERE split_part(c.upstream_user_id, '_', 2)::int > $1`,
      [options.storeSample],
    );
  }
  // Availability days name their event types, the connection's own (evt_usr_<n>_<e>).
  for (const [table, columns] of Object.entries(AVAILABILITY_TABLES)) {
    await db.sql.query(
      `INSERT INTO ${table} (connection_id, day, upstream_event_id, ${columns.join(', ')})
       SELECT c.id, u.day, 'evt_' || c.upstream_user_id || '_' || split_part(u.upstream_event_id, '_', 4),
              ${columns.map((column) => `u.${column}`).join(', ')}
       FROM connection c
       JOIN connection s ON s.upstream_user_id = 'usr_' || (${copyOf})
       JOIN ${table} u ON u.connection_id = s.id
       WHERE split_part(c.upstream_user_id, '_', 2)::int > $1`,
      [options.storeSample],
    );
  }
  await db.sql.query(
    'VACUUM ANALYZE utilization_day, booking_day, booking_week, booking_total_day, sync_health_day, availability_day, availability_day_closing, report_days_stored',
  );
  return Math.round(perConnection * 1000) / 1000;
}

/**
 * The retention run a day after NOW: every connection has the 20th to store (its last slots, its bookings), one
 * day behind, so they are stored a batch at a time (store/report-days.ts). Milliseconds per connection.
 */
async function timeNextDayRun(
  prisma: ReturnType<typeof createPrismaClient>,
  connections: number,
): Promise<number> {
  const started = performance.now();
  const result = await pruneHistory(prisma, STORE_ONLY, {
    now: new Date(NOW.getTime() + 86_400_000),
    pause: async () => undefined,
  });
  check(result.reportDayFailures === 0, `${result.reportDayFailures} connections failed the next day's run`);
  check(result.reportDaysStored > 0, "the next day's run stored nothing");
  return Math.round(((performance.now() - started) / connections) * 100) / 100;
}

/**
 * The hourly retention run at `now` with no day to store: what it costs is counting every connection's day so far
 * (up to a day of runs each the first time, an hour's since after). Milliseconds per connection.
 */
async function timeHourlyRun(db: TestDatabase, now: Date, connections: number): Promise<number> {
  const prisma = createPrismaClient(db.url);
  try {
    const started = performance.now();
    const result = await pruneHistory(prisma, STORE_ONLY, { now, pause: async () => undefined });
    check(result.reportDaysStored === 0, `the hourly run stored ${result.reportDaysStored} report days`);
    check(
      result.daysSoFarCounted === connections,
      `the hourly run counted ${result.daysSoFarCounted} days so far of ${connections}`,
    );
    return Math.round(((performance.now() - started) / connections) * 100) / 100;
  } finally {
    await prisma.$disconnect();
  }
}

async function tableBytes(db: TestDatabase): Promise<Record<string, number>> {
  const { rows } = await db.sql.query<{ name: string; mib: number }>(
    `SELECT relname AS name, round(pg_total_relation_size(oid) / 1048576.0)::float8 AS mib FROM pg_class
     WHERE relname IN ('slot_history', 'sync_run_history', 'sync_run_daily', 'sync_run', 'booking', 'utilization_day',
                       'booking_day', 'booking_week', 'booking_total_day', 'sync_health_day', 'sync_health_so_far')`,
  );
  return Object.fromEntries(rows.map((row) => [`${row.name} MiB`, row.mib]));
}

/** Seconds a report took: once, and when that was quick, the median of 3. Null: cancelled at the timeout. */
async function timeReport(run: () => Promise<unknown>): Promise<number | null> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    try {
      await run();
    } catch (thrown: unknown) {
      if (String(thrown).includes('statement timeout')) return null;
      throw thrown;
    }
    times.push((performance.now() - started) / 1000);
    if (times[0]! > 10 * TARGET_SECONDS) break;
  }
  const sorted = times.sort((a, b) => a - b);
  return Math.round((sorted[Math.floor(sorted.length / 2)] ?? 0) * 1000) / 1000;
}

/** Reads the report's CSV to its end, as a download would (runReportCsv), and returns its size in bytes. */
async function readCsv(reports: ReportStore, query: ReportQuery): Promise<number> {
  let bytes = 0;
  for await (const chunk of await runReportCsv(reports, query)) bytes += chunk.length;
  return bytes;
}

/** The year's history, packed as retention keeps it, in `db` (migrated, empty). */
export async function generateYearHistory(db: TestDatabase, options: ReportsYearOptions): Promise<void> {
  await generateConnections(db, options.connections);
  // The tables at once: the box has two cores.
  await Promise.all([
    generatePackedSlots(db, options),
    generatePackedRuns(db, options),
    // The last hour's are written after the retention run counts the day so far (benchReportsYear).
    generateTodaysRuns(db, options, undefined, LAST_COUNT),
    generateBookings(db),
  ]);
  await db.sql.query('VACUUM ANALYZE');
}

export async function benchReportsYear(options: ReportsYearOptions): Promise<BenchSection[]> {
  const db = await createTestDatabase('bench_reports_year');
  try {
    const started = performance.now();
    await generateYearHistory(db, options);
    const storeSecondsPerConnection = await generateStoredReportDays(db, options);
    const firstCountMs = await timeHourlyRun(db, LAST_COUNT, options.connections);
    await generateTodaysRuns(db, options, new Date(LAST_COUNT.getTime() + 1), NOW);
    await db.sql.query('VACUUM ANALYZE sync_run, sync_health_so_far');
    const generateSeconds = seconds(started);
    const counts = (
      await db.sql.query<Record<string, number>>(
        `SELECT (SELECT COUNT(*) FROM slot_history)::int AS "packed slot days",
                (SELECT COUNT(*) FROM sync_run_history)::int AS "packed run days",
                (SELECT COUNT(*) FROM sync_run_daily)::int AS "rolled-up run rows",
                (SELECT COUNT(*) FROM sync_run)::int AS "today's runs, row by row",
                (SELECT COUNT(*) FROM sync_run WHERE started_at > '${LAST_COUNT.toISOString()}')::int
                  AS "runs since the last count of the days so far",
                (SELECT COUNT(*) FROM booking)::int AS bookings,
                (SELECT COUNT(*) FROM utilization_day)::int AS "stored utilization days",
                (SELECT COUNT(*) FROM booking_day)::int AS "stored booking days",
                (SELECT COUNT(*) FROM booking_week)::int AS "stored booking weeks",
                (SELECT COUNT(*) FROM booking_total_day)::int AS "stored booking totals",
                (SELECT COUNT(*) FROM sync_health_day)::int AS "stored sync-health days",
                (SELECT COUNT(*) FROM report_days_stored WHERE sync_health_through IS NOT NULL)::int
                  AS "connections with sync-health days stored"`,
      )
    ).rows[0]!;
    // Every connection's reports read stored days, as after a retention run, not the runs.
    check(
      counts['connections with sync-health days stored'] === options.connections,
      `sync-health days stored for ${counts['connections with sync-health days stored']} connections`,
    );
    check(
      counts['packed slot days'] === options.connections * SLOT_DAYS,
      `expected ${options.connections * SLOT_DAYS} packed slot days, generated ${counts['packed slot days']}`,
    );
    const sizes = await tableBytes(db);
    console.log(`reports-year: generated in ${generateSeconds} s`, counts, sizes);

    // The reports on a client of their own whose sessions Postgres cancels at the timeout.
    await db.sql.query(
      `ALTER DATABASE "${db.name}" SET statement_timeout = '${Math.round(options.timeoutSeconds)}s'`,
    );
    const prisma = createPrismaClient(db.url);
    try {
      const reports = createReportStore(prisma);
      const one = await prisma.connection.findFirstOrThrow({ orderBy: { email: 'asc' } });
      const month: RawReportQuery = { from: '2026-08-01', to: '2026-08-31' };
      const cases: [ReportName, string, RawReportQuery][] = [];
      for (const name of ['bookings', 'utilization', 'sync-health'] as const) {
        cases.push([name, 'all, the year', {}], [name, 'one, the year', { connection: one.id }]);
        cases.push([name, 'all, a month', month], [name, 'one, a month', { ...month, connection: one.id }]);
      }
      // The groupings whose rows are few beside the totals and heat map every grouping reads.
      for (const by of ['week', 'weekday-hour'] as const)
        cases.push(['bookings', `all, the year, --by ${by}`, { by }]);
      // Availability looks ahead of its instant: as of a month back, and as of 5 months back.
      for (const [scope, at] of [
        ['a month back', '2026-08-20T12:00:00Z'],
        ['5 months back', '2026-04-20T12:00:00Z'],
      ] as const) {
        cases.push(['availability', `all, --at ${scope}`, { at }]);
        cases.push(['availability', `one, --at ${scope}`, { at, connection: one.id }]);
      }
      const figures: Record<string, number | string> = {
        'report days stored by the retention run, s per connection (its whole history)':
          storeSecondsPerConnection,
        'days so far counted by the retention run the first time, ms per connection': firstCountMs,
      };
      const targets: NonNullable<BenchSection['targets']> = {};
      for (const [name, scope, raw] of cases.filter(([name]) => options.reports?.includes(name) ?? true)) {
        const query = parseReportQuery(name, raw, NOW);
        const took = await timeReport(() => runReport(reports, query));
        const label = `${name} — ${scope}`;
        figures[`${label} (s)`] = took ?? `> ${options.timeoutSeconds} (cancelled)`;
        targets[label] = { target: `≤ ${TARGET_SECONDS} s`, met: took !== null && took <= TARGET_SECONDS };
        console.log(`reports-year: ${label}: ${figures[`${label} (s)`]} s (load ${loadAverage()})`);
        // The same report as the CSV `--format csv` and the admin's download write, where it is streamed from
        // Postgres (store/report-queries/csv-rows.ts): until its last byte is read.
        if (csvRows({ ...query }) === undefined) continue;
        const csvLabel = `${label}, as CSV streamed`;
        const csvTook = await timeReport(() => readCsv(reports, query));
        figures[`${csvLabel} (s)`] = csvTook ?? `> ${options.timeoutSeconds} (cancelled)`;
        targets[csvLabel] = {
          target: `≤ ${TARGET_SECONDS} s`,
          met: csvTook !== null && csvTook <= TARGET_SECONDS,
        };
        console.log(`reports-year: ${csvLabel}: ${figures[`${csvLabel} (s)`]} s (load ${loadAverage()})`);
      }
      // The pages over all connections for the year, as the admin page reads them: the rows its table lists, how many
      // there are, and (availability, utilization) each day's totals for the chart and summary; the bookings page by
      // booking, 6.2 million bookings, only this way.
      const pages: [ReportName, RawReportQuery][] = [
        ['availability', {}],
        ['utilization', {}],
        ...(['day', 'week', 'booking'] as const).map((by): [ReportName, RawReportQuery] => [
          'bookings',
          { by },
        ]),
      ];
      for (const [name, raw] of pages.filter(([name]) => options.reports?.includes(name) ?? true)) {
        const label = `${name} — all, the year${raw.by ? `, --by ${raw.by}` : ''}, as the admin page reads it`;
        const query = parseReportQuery(name, raw, NOW);
        const took = await timeReport(() => runReport(reports, query, { firstRows: TABLE_ROWS_SHOWN }));
        figures[`${label} (s)`] = took ?? `> ${options.timeoutSeconds} (cancelled)`;
        targets[label] = { target: `≤ ${TARGET_SECONDS} s`, met: took !== null && took <= TARGET_SECONDS };
        console.log(`reports-year: ${label}: ${figures[`${label} (s)`]} s (load ${loadAverage()})`);
      }
      // The next hourly run, which adds the hour's runs to each day so far.
      figures['days so far counted by the hourly retention run after, ms per connection'] =
        await timeHourlyRun(db, NOW, options.connections);
      // Last, as it stores the 20th: the next day's run, every connection one day behind.
      figures['report days stored the next day by the retention run, ms per connection (batched)'] =
        await timeNextDayRun(prisma, options.connections);
      return [
        {
          benchmark: 'reports over a year of 10,000 connections',
          inputs: {
            connections: options.connections,
            eventTypesPerConnection: 3,
            slotsPerDay: options.slotsPerDay,
            runsPerDay: options.runsPerDay,
            poolDays: options.pool,
            ...counts,
            ...sizes,
            generateSeconds,
            timeoutSeconds: options.timeoutSeconds,
            storeSample: options.storeSample,
          },
          figures,
          targets,
        },
      ];
    } finally {
      await prisma.$disconnect();
    }
  } finally {
    if (process.env.BENCH_YEAR_KEEP) console.log(`kept ${db.url}`);
    else await db.drop();
  }
}
