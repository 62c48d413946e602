// The booking_weeks migration on an installation whose report days are stored and whose weeks are not (as every
// installation before it): the bookings report answers as it did before, from the history, until the next
// retention run stores each connection's weeks over by then; from then on it reads them, with the same answers.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { applyPendingMigrations } from '../../src/store/migrations/index.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, MIGRATIONS_DIR, type TestDatabase } from '../support/db.js';
import { storeOnly } from '../support/store-only.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';
import {
  bookingAnswers as answersOf,
  BOOKING_SCOPES as WEEK_SCOPES,
  differingAnswers,
  readAndInOwnZone,
} from './report-answers.js';

const MIGRATION = '20261202000000_booking_weeks';

let db: TestDatabase;
let ids: { connections: string[]; eventId: string };
const bookingAnswers = () => answersOf(db.prisma, ids);

beforeAll(async () => {
  db = await createTestDatabase('booking_weeks_migration');
  ids = await generateMixedHistory(db.prisma);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

const pass = (now: Date) => pruneHistory(db.prisma, storeOnly(2), { now, pause: async () => undefined });

describe('the booking_weeks migration', () => {
  it('leaves the stored days, and the next run stores every connection’s weeks with the same answers', async () => {
    const computed = await bookingAnswers();
    const before = await readAndInOwnZone(db, 'bookings', WEEK_SCOPES, { by: 'week' });
    expect(before.read).toEqual(before.inOwnZone);
    expect(before.read.flat().length).toBeGreaterThan(4 * 10);
    // The days stored as the run before this migration stored them, then the migration undone: no weeks.
    await pass(HISTORY_NOW);
    await db.sql.query(`
      DROP TABLE booking_week;
      ALTER TABLE report_days_stored DROP COLUMN weeks_through;
      DELETE FROM _prisma_migrations WHERE migration_name = '${MIGRATION}'`);
    const days = (await db.sql.query(`SELECT count(*)::int AS n FROM booking_day`)).rows[0]?.n as number;
    expect(days).toBeGreaterThan(100);

    await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: MIGRATIONS_DIR });
    expect((await db.sql.query(`SELECT count(*)::int AS n FROM booking_day`)).rows[0]?.n).toBe(days);
    expect(
      (await db.sql.query(`SELECT count(*)::int AS n FROM report_days_stored WHERE weeks_through IS NULL`))
        .rows[0]?.n,
    ).toBe(4);
    expect(differingAnswers(computed, await bookingAnswers())).toEqual([]);

    // An hour later, no day is over since: the run stores the weeks alone, through each zone's last Sunday.
    const run = await pass(new Date(HISTORY_NOW.getTime() + 3_600_000));
    expect(run.reportDayFailures).toBe(0);
    expect(
      (
        await db.sql.query<{ weeks_through: string }>(
          `SELECT DISTINCT weeks_through::text FROM report_days_stored`,
        )
      ).rows,
    ).toEqual([{ weeks_through: '2026-09-13' }]);
    expect((await db.sql.query(`SELECT count(*)::int AS n FROM booking_week`)).rows[0]?.n).toBeGreaterThan(
      4 * 8,
    );
    expect((await db.sql.query(`SELECT count(*)::int AS n FROM booking_day`)).rows[0]?.n).toBe(days);
    expect(differingAnswers(computed, await bookingAnswers())).toEqual([]);
    const after = await readAndInOwnZone(db, 'bookings', WEEK_SCOPES, { by: 'week' });
    expect(after.read).toEqual(after.inOwnZone);
  }, 300_000);
});
