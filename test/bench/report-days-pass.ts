// Benchmark (issue 43): what the hourly retention run's pass over report days (store/report-days.ts) costs as
// connections grow. Connections are generated in bulk in four zones a quarter each (no history: what is measured
// is the pass, not a day's counting, which reports-year times), and three runs are timed with their Postgres
// statements counted: the first (every connection's days to store), one an hour later (no day over anywhere),
// and one when Lord Howe's day has been over for SETTLE_MS (a quarter of the connections with a day to store).
// Timing is reported, never asserted.
import { pruneHistory } from '../../src/store/retention.js';
import { createPrismaClient } from '../../src/store/prisma-client.js';
import { createTestDatabase } from '../support/db.js';
import { check, type BenchSection } from './bench-result.js';
import { loadAverage, round } from './process-stats.js';
import { countPostgresStatements } from './round-trip-counts.js';
import { storeOnly } from '../support/store-only.js';

const ZONES = ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'];
/** The first run; an hour on, when no zone's day is over; Lord Howe's 20 September over at 13:30 UTC, + 1 h. */
const FIRST = new Date('2026-09-20T12:00:00Z');
const NOTHING_OVER = new Date('2026-09-20T13:00:00Z');
const LORD_HOWE_OVER = new Date('2026-09-20T14:45:00Z');
/** Nothing packed or pruned: the pass over report days alone. */
const STORE_ONLY = storeOnly();

export async function benchReportDaysPass(options: { connections: number }): Promise<BenchSection[]> {
  const db = await createTestDatabase('bench_report_days_pass');
  const prisma = createPrismaClient(db.url);
  try {
    await db.sql.query(
      `INSERT INTO connection (id, upstream_user_id, email, timezone, status, first_synced_at, updated_at)
       SELECT gen_random_uuid(), 'usr_' || i, 'user' || i || '@bench.test', ($2::text[])[1 + i % 4], 'active',
              $3::timestamptz - interval '2 days', now()
       FROM generate_series(1, $1::int) i`,
      [options.connections, ZONES, FIRST],
    );
    await db.sql.query('VACUUM ANALYZE connection');
    const run = async (now: Date) => {
      const statements = countPostgresStatements();
      const started = performance.now();
      try {
        const result = await pruneHistory(prisma, STORE_ONLY, { now, pause: async () => undefined });
        check(result.reportDayFailures === 0, `${result.reportDayFailures} connections failed`);
      } finally {
        statements.stop();
      }
      return { seconds: round((performance.now() - started) / 1000, 2), statements: statements.read() };
    };
    const first = await run(FIRST);
    const nothingOver = await run(NOTHING_OVER);
    const lordHowe = await run(LORD_HOWE_OVER);
    const storedThrough20th = Number(
      (await db.sql.query(`SELECT count(*) AS n FROM report_days_stored WHERE through = '2026-09-20'`))
        .rows[0]?.n,
    );
    check(
      storedThrough20th === options.connections / 4,
      `${storedThrough20th} connections stored through the 20th, not Lord Howe's ${options.connections / 4}`,
    );
    const perMillion = 1_000_000 / options.connections;
    return [
      {
        benchmark: 'retention: the pass over report days',
        inputs: { connections: options.connections, zones: ZONES.join(', '), loadAverage1m: loadAverage() },
        figures: {
          firstRunSeconds: first.seconds,
          firstRunStatements: first.statements,
          nothingOverSeconds: nothingOver.seconds,
          nothingOverStatements: nothingOver.statements,
          quarterOverSeconds: lordHowe.seconds,
          quarterOverStatements: lordHowe.statements,
          statementsPerConnectionWithADayOver: round(lordHowe.statements / (options.connections / 4), 2),
          nothingOverSecondsAtAMillion: round(nothingOver.seconds * perMillion, 1),
          nothingOverStatementsAtAMillion: Math.round(nothingOver.statements * perMillion),
        },
      },
    ];
  } finally {
    await prisma.$disconnect();
    await db.drop();
  }
}
