// Benchmark: every report over a generated history of ~1.1 million slot rows (100 connections × 3 event types ×
// a year × 10 slots a day, ~5 % booked) and ~440,000 sync runs, in a fresh test database. The bookings are
// inferred from the closes as the pull_order_and_bookings migration's backfill does it, and timed. Times each
// report over all connections and over one; with BENCH_EXPLAIN=1 prints the plans. Timing is reported, never
// asserted.
import { Prisma } from '../../src/generated/prisma/client.js';
import { parseReportQuery, type RawReportQuery, type ReportName } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { createReportStore } from '../../src/store/reports.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase } from '../support/db.js';
import { check, type BenchSection } from './bench-result.js';

const NOW = new Date('2026-09-20T12:00:00Z');

async function generateHistory(prisma: Awaited<ReturnType<typeof createTestDatabase>>['prisma']) {
  await prisma.$executeRaw`
    INSERT INTO connection (id, upstream_user_id, email, timezone, status, updated_at)
    SELECT gen_random_uuid(), 'usr_' || i, 'user' || lpad(i::text, 3, '0') || '@bench.test',
           (ARRAY['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'])[1 + i % 4],
           (CASE WHEN i % 25 = 0 THEN 'needs_reauth' ELSE 'active' END)::connection_status, now()
    FROM generate_series(1, 100) i`;
  await prisma.$executeRaw`
    INSERT INTO event_type (connection_id, upstream_event_id, title, duration_minutes, enabled, content_hash,
                            payload, valid_from)
    SELECT c.id, 'evt_' || c.upstream_user_id || '_' || e, 'Event ' || e, 30, true, 'hash', '{}'::jsonb,
           '2025-01-01T00:00:00Z'
    FROM connection c, generate_series(1, 3) e`;
  // Slots first seen 1–28 days ahead (never after "now"); 5 % vanish between then and their start (booked),
  // the rest expire 10 minutes after they start, or are still open when they lie ahead of "now".
  await prisma.$executeRaw`
    INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at, gone_at)
    SELECT et.connection_id, et.upstream_event_id, x.st, x.st + interval '30 minutes', y.fs, y.fs,
           CASE WHEN x.r < 0.05 THEN date_trunc('hour', y.fs + (x.st - y.fs) * random())
                WHEN x.st + interval '10 minutes' <= ${NOW}::timestamptz THEN x.st + interval '10 minutes'
           END
    FROM event_type et, generate_series(0, 364) d, generate_series(0, 9) h,
    LATERAL (SELECT '2025-09-25T06:00:00Z'::timestamptz + d * interval '1 day' + h * interval '1 hour' AS st,
                    random() AS r) x,
    LATERAL (SELECT LEAST(x.st - (1 + random() * 27) * interval '1 day', ${NOW}::timestamptz) AS fs) y`;
  await prisma.$executeRaw`
    UPDATE slot SET close_reason = (CASE WHEN gone_at < starts_at THEN 'taken' ELSE 'passed' END)::slot_close_reason
    WHERE gone_at IS NOT NULL`;
  await prisma.$executeRaw`
    INSERT INTO sync_run (id, connection_id, started_at, finished_at, outcome, error_code, error_message,
                          upstream_calls)
    SELECT gen_random_uuid(), c.id, t.s, t.s + (1 + random() * 9) * interval '1 second',
           (CASE WHEN t.f THEN 'failed' ELSE 'succeeded' END)::sync_outcome,
           CASE WHEN t.f THEN 'upstream_5xx' END, CASE WHEN t.f THEN 'GET /events answered 503' END,
           30 + (random() * 20)::int
    FROM connection c,
    LATERAL (SELECT g AS s, random() < 0.02 AS f
             FROM generate_series('2025-09-20T00:00:00Z'::timestamptz, ${NOW}::timestamptz, interval '2 hours') g) t`;
  await prisma.$executeRaw`ANALYZE`;
}

/** The migration's backfill: every sync that closed slots as taken, through slotfeed_inferred_bookings. */
async function inferBookings(prisma: Awaited<ReturnType<typeof createTestDatabase>>['prisma']) {
  await prisma.$executeRaw`
    INSERT INTO booking (connection_id, detected_at, starts_at, ends_at, event_ids, slots_closed)
    SELECT d.connection_id, d.gone_at, b.starts_at, b.ends_at, b.event_ids, b.slots_closed
    FROM (SELECT DISTINCT connection_id, gone_at FROM slot WHERE close_reason = 'taken') d,
         LATERAL slotfeed_inferred_bookings(d.connection_id, d.gone_at) b`;
  await prisma.$executeRaw`ANALYZE booking`;
}

async function median3(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await run();
    times.push((performance.now() - started) / 1000);
  }
  return Math.round((times.sort((a, b) => a - b)[1] ?? 0) * 1000) / 1000;
}

/**
 * One section: inputs (what was generated), figures (seconds per report and scope, median of 3 runs). With
 * `packed`, the history is packed first as the compaction packs it (store/history-compaction.ts): every day
 * before NOW's, one row per connection and day.
 */
export async function benchReports(options: { packed?: boolean } = {}): Promise<BenchSection[]> {
  const db = await createTestDatabase('bench_reports');
  try {
    const started = performance.now();
    await generateHistory(db.prisma);
    const generateSeconds = Math.round((performance.now() - started) / 100) / 10;
    const inferStarted = performance.now();
    await inferBookings(db.prisma);
    const inferBookingsSeconds = Math.round((performance.now() - inferStarted) / 100) / 10;
    let packSeconds: number | undefined;
    if (options.packed) {
      const packStarted = performance.now();
      await pruneHistory(
        db.prisma,
        { syncRunDays: 0, closedSlotDays: 0, compactAfterDays: 1, batchSize: 1000 },
        { now: NOW, pause: async () => undefined },
      );
      await db.prisma.$executeRaw`VACUUM ANALYZE`;
      packSeconds = Math.round((performance.now() - packStarted) / 100) / 10;
    }
    const bookings = await db.prisma.booking.count();
    const slotRows = await db.prisma.slot.count();
    const syncRuns = await db.prisma.syncRun.count();
    const packedSlotDays = await db.prisma.slotHistory.count();
    const packedRunDays = await db.prisma.syncRunHistory.count();
    if (!options.packed)
      check(slotRows >= 1_000_000, `expected at least 1,000,000 slot rows, generated ${slotRows}`);
    const one = await db.prisma.connection.findFirstOrThrow({ orderBy: { email: 'asc' } });

    const cases: [ReportName, string, RawReportQuery][] = [];
    for (const name of ['availability', 'bookings', 'utilization', 'sync-health'] as const) {
      cases.push([name, 'all connections', {}]);
      cases.push([name, 'one connection', { connection: one.id }]);
    }
    cases.push(['availability', 'all, --at 3 months back', { at: '2026-06-20T12:00:00Z' }]);
    cases.push(['bookings', 'all, --by weekday-hour', { by: 'weekday-hour' }]);
    cases.push(['bookings', 'one connection, --by booking', { connection: one.id, by: 'booking' }]);
    cases.push([
      'bookings',
      'all, --by week, one month',
      { by: 'week', from: '2026-05-01', to: '2026-05-31' },
    ]);
    cases.push(['utilization', 'all, one month', { from: '2026-05-01', to: '2026-05-31' }]);

    const seconds: Record<string, number> = {};
    for (const [name, scope, raw] of cases) {
      const query = parseReportQuery(name, raw, NOW);
      seconds[`${name} — ${scope}`] = await median3(() => runReport(createReportStore(db.prisma), query));
    }
    if (process.env.BENCH_EXPLAIN === '1') {
      const plan = await db.prisma.$queryRaw<{ 'QUERY PLAN': string }[]>(
        Prisma.sql`EXPLAIN ANALYZE SELECT count(*) FROM slot WHERE gone_at IS NOT NULL AND gone_at < starts_at`,
      );
      console.log(plan.map((p) => p['QUERY PLAN']).join('\n'));
    }
    return [
      {
        benchmark: options.packed ? 'reports, history packed' : 'reports',
        inputs: {
          slotRows,
          syncRuns,
          packedSlotDays,
          packedRunDays,
          ...(packSeconds === undefined ? {} : { packSeconds }),
          bookings,
          connections: 100,
          eventTypesPerConnection: 3,
          generateSeconds,
          inferBookingsSeconds,
        },
        figures: Object.fromEntries(Object.entries(seconds).map(([name, s]) => [`${name} (s)`, s])),
        targets: Object.fromEntries(
          Object.entries(seconds).map(([name, s]) => [
            name,
            { target: 'within a few seconds (≤ 5 s)', met: s <= 5 },
          ]),
        ),
      },
    ];
  } finally {
    await db.drop();
  }
}
