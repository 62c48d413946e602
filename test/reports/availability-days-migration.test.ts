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
/** The migrations after it: the days keyed by event type, their lists indexed, their event types kept with the marks. */
const BY_EVENT_TYPE = '20261202300000_availability_days_by_event_type';
const COVERED = '20261202400000_availability_days_covered';
const EVENT_IDS = '20261202500000_availability_event_ids';
const LATER = [BY_EVENT_TYPE, COVERED, EVENT_IDS].map((name) => `'${name}'`).join(', ');

/** Undoes the availability_event_ids migration: the column, and the functions that keep it with their triggers. */
const UNDO_EVENT_IDS = `
  DROP FUNCTION availability_event_ids_of, availability_days_listed, availability_event_ids_filled CASCADE;
  ALTER TABLE report_days_stored DROP COLUMN availability_event_ids;`;

/** Event types with availability days stored that their connection's list (availability_event_ids) lacks. */
const unlistedEventTypes = async () =>
  (
    await db.sql.query(`
      SELECT DISTINCT a.connection_id::text, a.upstream_event_id FROM availability_day a
      LEFT JOIN report_days_stored s ON s.connection_id = a.connection_id
      WHERE NOT a.upstream_event_id = ANY(COALESCE(s.availability_event_ids, '{}'))`)
  ).rows;

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
      ${UNDO_EVENT_IDS}
      ALTER TABLE report_days_stored DROP COLUMN availability_through, DROP COLUMN availability_ahead;
      DELETE FROM _prisma_migrations WHERE migration_name IN ('${MIGRATION}', ${LATER})`);
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
    expect(await unlistedEventTypes()).toEqual([]);
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

  it('reads a day whose lists are too long for the covering index from the table, with the same answers', async () => {
    // A connection whose slots of one day were each first seen at an instant of its own (70 sightings, past
    // LISTS_INDEXED's 64), read at instants before, among and after them.
    await db.sql.query(`
      INSERT INTO connection (id, upstream_user_id, email, timezone, status, first_synced_at, updated_at)
      VALUES (md5('long lists')::uuid, 'usr_long', 'long@example.test', 'Europe/Berlin', 'active',
              '2026-08-01T00:00:00Z', now());
      INSERT INTO event_type (connection_id, upstream_event_id, title, duration_minutes, enabled, content_hash, payload,
                              valid_from)
      VALUES (md5('long lists')::uuid, 'evt_1', 'Event 1', 30, true, 'h', '{}'::jsonb, '2026-08-01T00:00:00Z');
      INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at, gone_at,
                        close_reason)
      SELECT md5('long lists')::uuid, 'evt_1', s.at, s.at + interval '30 minutes', f.at, f.at,
             s.at + interval '10 minutes', 'passed'
      FROM generate_series(0, 69) k,
      LATERAL (SELECT timestamptz '2026-09-05T06:00:00Z' + k * interval '5 minutes' AS at) s,
      LATERAL (SELECT timestamptz '2026-08-20T00:00:00Z' + k * interval '5 hours 3 minutes' AS at) f`);
    const run = await pass(new Date(HISTORY_NOW.getTime() + 2 * 3_600_000));
    expect(run.reportDayFailures).toBe(0);
    const long = await db.sql.query<{ day: string; instants: number }>(`
      SELECT day::text, cardinality(seen_at) + cardinality(closed_early_at) AS instants FROM availability_day
      WHERE connection_id = md5('long lists')::uuid`);
    expect(long.rows).toEqual([{ day: '2026-09-05', instants: 70 }]);
    expect(await unlistedEventTypes()).toEqual([]);

    const scopes: RawReportQuery[] = [
      ...AVAILABILITY_SCOPES,
      { at: '2026-08-27T10:00:00.000Z' },
      { at: '2026-09-05T07:00:00.000Z' },
    ];
    const { read, inOwnZone } = await readAndInOwnZone(db, 'availability', scopes);
    expect(read).toEqual(inOwnZone);
    // The day's free slots as the sightings come: none before the first, some among them, all after the last.
    const freeOnTheDay = async (at: string) => {
      const rows = (await readAndInOwnZone(db, 'availability', [{ at }])).read.flat() as {
        free_slots: number;
      }[];
      return rows.filter((row) => 'connection' in row && row.connection === 'long@example.test');
    };
    expect(await freeOnTheDay('2026-08-19T12:00:00.000Z')).toEqual([]);
    const among = await freeOnTheDay('2026-08-27T10:00:00.000Z');
    expect(among).toHaveLength(1);
    expect(among[0]!.free_slots).toBeGreaterThan(0);
    expect(among[0]!.free_slots).toBeLessThan(70);
    expect((await freeOnTheDay('2026-09-05T05:00:00.000Z'))[0]?.free_slots).toBe(70);
  }, 300_000);

  it('keeps each connection’s event types with its marks, filled from the days stored, with the same answers', async () => {
    const listed = await availabilityAnswers();
    // As the migrations before it left an installation: no list.
    await db.sql.query(`
      ${UNDO_EVENT_IDS}
      DELETE FROM _prisma_migrations WHERE migration_name = '${EVENT_IDS}'`);
    await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: MIGRATIONS_DIR });
    expect(await unlistedEventTypes()).toEqual([]);
    const lists = await db.sql.query<{ ids: string[] }>(
      `SELECT availability_event_ids AS ids FROM report_days_stored WHERE availability_through IS NOT NULL`,
    );
    expect(lists.rows.length).toBeGreaterThan(0);
    expect(lists.rows.every(({ ids }) => ids.length > 0)).toBe(true);
    expect(differingAnswers(listed, await availabilityAnswers())).toEqual([]);
    const { read, inOwnZone } = await readAndInOwnZone(db, 'availability', AVAILABILITY_SCOPES);
    expect(read).toEqual(inOwnZone);

    // Written by what does not know the list (a scheduler of the version before, still running): a day of an event
    // type new to its connection, and a connection's marks made again as a zone move makes them.
    const [one] = ids.connections;
    await db.sql.query(
      `INSERT INTO availability_day (connection_id, day, upstream_event_id, seen_at, seen_slots, seen_ms,
                                     closed_early_at, closed_early_slots, closed_early_ms)
       VALUES ($1, '2026-09-01', 'evt_new', '{2026-08-20T00:00:00Z}', '{1}', '{1800000}', '{}', '{}', '{}')`,
      [one],
    );
    expect(await unlistedEventTypes()).toEqual([]);
    await db.sql.query(
      `WITH gone AS (DELETE FROM report_days_stored WHERE connection_id = $1 RETURNING *)
       INSERT INTO report_days_stored (connection_id, zone, through, sync_health_through, weeks_through,
                                       availability_through, availability_ahead, booking_totals_through)
       SELECT connection_id, zone, through, sync_health_through, weeks_through, availability_through,
              availability_ahead, booking_totals_through FROM gone`,
      [one],
    );
    expect(await unlistedEventTypes()).toEqual([]);
    const free = await readAndInOwnZone(db, 'availability', [{ at: '2026-08-31T12:00:00.000Z' }]);
    expect(JSON.stringify(free.read)).toContain('evt_new');
  }, 300_000);
});
