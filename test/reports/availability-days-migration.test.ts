// The availability_days migration on an installation whose report days are stored and whose availability days are
// not (as every installation before it): the availability report answers as it did, from the slots, until the next
// retention run stores each connection's days over by then from the slot history kept; from then on it reads them,
// with the same answers at any instant: mid-day, at a day's first and last millisecond, before and after a day's
// slots were first seen, with --from and --to around it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RawReportQuery } from '../../src/reports/report-query.js';
import { applyPendingMigrations } from '../../src/store/migrations/index.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, MIGRATIONS_DIR, type TestDatabase } from '../support/db.js';
import { storeOnly } from '../support/store-only.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';
import { allReportAnswers, differingAnswers, readAndInOwnZone } from './report-answers.js';

const MIGRATION = '20261202100000_availability_days';
/** The migration after it that keys the days by event type (availability-days.ts, storedAvailabilityInOrder). */
const BY_EVENT_TYPE = '20261202300000_availability_days_by_event_type';

let db: TestDatabase;
let ids: { connections: string[]; eventId: string };

beforeAll(async () => {
  db = await createTestDatabase('availability_days_migration');
  ids = await generateMixedHistory(db.prisma);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

const availabilityAnswers = async () =>
  new Map([...(await allReportAnswers(db.prisma, ids))].filter(([key]) => key.startsWith('availability,')));

/** Instants and ranges a stored day is read at: T inside a day, on its edges, and days cut by --from and --to. */
const AVAILABILITY_SCOPES: RawReportQuery[] = [
  { at: '2026-09-01T07:13:21.456Z' },
  { at: '2026-08-20T00:00:00.000Z' },
  { at: '2026-08-20T21:59:59.999Z' },
  { at: '2026-09-10T18:30:00.000Z' },
  { at: '2026-09-15T03:00:00.001Z', from: '2026-09-16', to: '2026-09-18' },
  { at: '2026-08-25T12:00:00.000Z', to: '2026-08-25' },
  { at: '2026-07-01T12:00:00.000Z' },
  {},
];

const pass = (now: Date) => pruneHistory(db.prisma, storeOnly(2), { now, pause: async () => undefined });

describe('the availability_days migration', () => {
  it('leaves the stored days, and the next run stores every connection’s availability days with the same answers', async () => {
    const computed = await availabilityAnswers();
    const before = await readAndInOwnZone(db, 'availability', AVAILABILITY_SCOPES);
    expect(before.read).toEqual(before.inOwnZone);
    expect(before.read.flat().length).toBeGreaterThan(4 * 50);
    // The days stored as the run before this migration stored them, then the migration undone.
    await pass(HISTORY_NOW);
    await db.sql.query(`
      DROP TABLE availability_day, availability_day_closing;
      ALTER TABLE report_days_stored DROP COLUMN availability_through, DROP COLUMN availability_ahead;
      DELETE FROM _prisma_migrations WHERE migration_name IN ('${MIGRATION}', '${BY_EVENT_TYPE}')`);
    const days = (await db.sql.query(`SELECT count(*)::int AS n FROM utilization_day`)).rows[0]?.n as number;
    expect(days).toBeGreaterThan(100);

    await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: MIGRATIONS_DIR });
    expect((await db.sql.query(`SELECT count(*)::int AS n FROM utilization_day`)).rows[0]?.n).toBe(days);
    expect(
      (
        await db.sql.query(
          `SELECT count(*)::int AS n FROM report_days_stored WHERE availability_through IS NULL`,
        )
      ).rows[0]?.n,
    ).toBe(4);
    expect(differingAnswers(computed, await availabilityAnswers())).toEqual([]);

    // An hour later, no day is over since: the run stores the availability days alone, from the slots kept.
    const run = await pass(new Date(HISTORY_NOW.getTime() + 3_600_000));
    expect(run.reportDayFailures).toBe(0);
    const marks = await db.sql.query<{ behind: number }>(
      `SELECT count(*)::int AS behind FROM report_days_stored
       WHERE availability_through IS DISTINCT FROM through OR availability_ahead IS NULL`,
    );
    expect(marks.rows[0]?.behind).toBe(0);
    expect(
      (await db.sql.query(`SELECT count(*)::int AS n FROM availability_day`)).rows[0]?.n,
    ).toBeGreaterThan(4 * 30);
    expect(differingAnswers(computed, await availabilityAnswers())).toEqual([]);
    const after = await readAndInOwnZone(db, 'availability', AVAILABILITY_SCOPES);
    expect(after.read).toEqual(after.inOwnZone);
    expect(after.read).toEqual(before.read);
  }, 300_000);

  it('keys the stored days by event type, with the same answers as under the key by day', async () => {
    const stored = await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM availability_day`);
    expect(stored.rows[0]?.n).toBeGreaterThan(4 * 30);
    const byEventType = await availabilityAnswers();
    const keyColumns = async () =>
      (
        await db.sql.query<{ key: string }>(
          `SELECT pg_get_indexdef('availability_day_pkey'::regclass) AS key`,
        )
      ).rows[0]?.key;
    expect(await keyColumns()).toContain('(connection_id, upstream_event_id, day)');
    // As the availability_days migration left them: keyed by day.
    await db.sql.query(`
      ALTER TABLE availability_day DROP CONSTRAINT availability_day_pkey,
        ADD CONSTRAINT availability_day_pkey PRIMARY KEY (connection_id, day, upstream_event_id);
      DELETE FROM _prisma_migrations WHERE migration_name = '${BY_EVENT_TYPE}'`);
    expect(differingAnswers(byEventType, await availabilityAnswers())).toEqual([]);

    await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: MIGRATIONS_DIR });
    expect(await keyColumns()).toContain('(connection_id, upstream_event_id, day)');
    expect((await db.sql.query(`SELECT count(*)::int AS n FROM availability_day`)).rows[0]?.n).toBe(
      stored.rows[0]?.n,
    );
    expect(differingAnswers(byEventType, await availabilityAnswers())).toEqual([]);
    const after = await readAndInOwnZone(db, 'availability', AVAILABILITY_SCOPES);
    expect(after.read).toEqual(after.inOwnZone);
  }, 300_000);
});
