// Report days stored once they are over (issue 43): the retention run keeps each connection's past local days as
// the reports compute them (utilization's figures, the bookings report's by day), the reports read those and
// compute only the days after, and every utilization and bookings answer (each scope, grouping and format) stays
// what it was computed from the history. A connection whose zone changes has its days counted again in the new
// zone; stored days go with their slots.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { beginReportDayPass, storeReportDayBatch } from '../../src/store/report-days.js';
import { pruneHistory, type RetentionSettings } from '../../src/store/retention.js';
import { createReportStore } from '../../src/store/reports.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { throughStatements } from '../support/raw-statements.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';
import { allReportAnswers, differingAnswers } from './report-answers.js';
import { storeOnly } from '../support/store-only.js';

const DAY_MS = 86_400_000;
/** Nothing packed or pruned: only the report days are stored, two connections a batch. */
const STORE_ONLY = storeOnly(2);
const pass = (db: TestDatabase, settings = STORE_ONLY, now = HISTORY_NOW) =>
  pruneHistory(db.prisma, settings, { now, pause: async () => undefined });

let db: TestDatabase;
let ids: { connections: string[]; eventId: string };

/**
 * Another session's transaction, open while the history is made and the runs store its days, as on a server that
 * is never idle: each statement's snapshot then still waits on it. Postgres then planned the run's statements
 * otherwise (a connection's zone worked into the key of an index scan of its rows, every connection's), and a run
 * storing one connection's days failed on another's zone.
 */
let elsewhere: pg.PoolClient | undefined;

beforeAll(async () => {
  db = await createTestDatabase('utilization_days');
  elsewhere = await db.sql.connect();
  // Held out of the pool, so the pool's listener does not cover it: a backend that ends is this test's failure.
  elsewhere.on('error', () => undefined);
  await elsewhere.query('BEGIN');
  await elsewhere.query('SELECT pg_current_xact_id()');
  ids = await generateMixedHistory(db.prisma);
}, 120_000);

afterAll(async () => {
  try {
    await elsewhere?.query('ROLLBACK');
  } finally {
    elsewhere?.release(true);
    await db?.drop();
  }
});

const storedDayAnswers = async () =>
  new Map(
    [...(await allReportAnswers(db.prisma, ids))].filter(
      ([key]) =>
        key.startsWith('utilization,') ||
        key.startsWith('bookings,') ||
        key.startsWith('sync-health,') ||
        key.startsWith('availability,'),
    ),
  );

const stored = async () =>
  (
    await db.sql.query<{ connection_id: string; zone: string; through: string }>(
      `SELECT connection_id::text, zone, through::text FROM report_days_stored ORDER BY connection_id`,
    )
  ).rows;

/** Offered minutes per day of one connection's utilization report, as the report prints them. */
async function offeredByDay(connection: string, tz?: string): Promise<Map<string, unknown>> {
  const query = parseReportQuery('utilization', { connection, ...(tz ? { tz } : {}) }, HISTORY_NOW);
  const result = await runReport(createReportStore(db.prisma), query);
  return new Map(result.rows.map((row) => [String(row.day), row.offered_minutes]));
}

/** A figure per day or week of one connection's bookings report, as the report prints it. */
async function bookingsFigure(
  connection: string,
  by: 'day' | 'week',
  figure: 'opened' | 'bookings',
  tz?: string,
): Promise<Map<string, unknown>> {
  const query = parseReportQuery('bookings', { connection, by, ...(tz ? { tz } : {}) }, HISTORY_NOW);
  const result = await runReport(createReportStore(db.prisma), query);
  return new Map(result.rows.map((row) => [String(row[by]), row[figure]]));
}

/**
 * That a report reads a stored row of the first connection (in Europe/Berlin): one of `read`'s figures (by day or
 * week) is set to `value` in its row of `table`; the report in the connection's own zone then shows `value`, and with
 * --tz of that zone (which reads nothing stored) what it showed before; the row is put back.
 */
async function expectStoredRowRead(
  row: { table: string; key: 'day' | 'week'; column: string; value: number },
  read: (tz?: string) => Promise<Map<string, unknown>>,
): Promise<void> {
  const [berlin] = ids.connections as [string];
  const before = await read();
  const period = [...before.keys()][1] as string;
  const set = (value: unknown) =>
    db.sql.query(
      `UPDATE ${row.table} SET ${row.column} = $3 WHERE connection_id = $1::uuid AND ${row.key} = $2::date`,
      [berlin, period, value],
    );
  await set(row.value);
  expect((await read()).get(period)).toBe(row.value);
  expect((await read('Europe/Berlin')).get(period)).toBe(before.get(period));
  await set(before.get(period));
}

/**
 * Whether a run's statement is the report days' (true) or the sync-health day so far's that follows them, last in a
 * run (sync-health-so-far.ts, which visits every connection each run by design and has its own test). A run's watcher
 * calls it on each statement in order; `begin` starts a run.
 */
function reportDayStatements() {
  let countingSoFar = false;
  return {
    begin: () => (countingSoFar = false),
    isReportDays: (sql: string) => !(countingSoFar ||= sql.includes('pg_current_snapshot')),
  };
}

/** The test's client, telling `seen` the values each raw statement is sent with (its connections, say). */
const watchingStatements = (seen: (values: unknown[], sql: string) => void): PrismaClient =>
  throughStatements(db.prisma, (statement, run) => {
    seen(statement.values ?? [], statement.sql ?? '');
    return run();
  });

describe('report days stored once they are over', () => {
  it('answers every utilization and bookings report as computed, reading the stored days', async () => {
    const computed = await storedDayAnswers();
    // Half an hour after Berlin's midnight its day is not stored yet (a sync may still commit rows of it), where
    // Kolkata's, over for four hours, is.
    const first = await pass(db, STORE_ONLY, new Date('2026-09-09T22:30:00Z'));
    expect(first.reportDaysStored).toBeGreaterThan(100);
    expect((await stored()).map((row) => [row.zone, row.through]).sort()).toEqual(
      [
        ['Asia/Kolkata', '2026-09-09'],
        ['Australia/Lord_Howe', '2026-09-09'],
        ['Europe/Berlin', '2026-09-08'],
        ['UTC', '2026-09-08'],
      ].sort(),
    );
    // A pass ten days back stores the days over then; the next, the days since.
    const earlier = await pass(db, STORE_ONLY, new Date(HISTORY_NOW.getTime() - 10 * DAY_MS));
    const now = await pass(db);
    expect(earlier.reportDaysStored).toBeGreaterThan(0);
    expect(now.reportDaysStored).toBeGreaterThanOrEqual(4 * 9);
    // Days, and whole weeks: eight or more a connection in the history's two months.
    for (const [table, rows] of [
      ['utilization_day', 100],
      ['booking_day', 100],
      ['booking_week', 4 * 8],
    ] as const)
      expect(Number((await db.sql.query(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n)).toBeGreaterThan(
        rows,
      );
    // Through yesterday in each connection's zone (UTC for the one without).
    expect((await stored()).map((row) => [row.zone, row.through]).sort()).toEqual(
      [
        ['Asia/Kolkata', '2026-09-19'],
        ['Australia/Lord_Howe', '2026-09-19'],
        ['Europe/Berlin', '2026-09-19'],
        ['UTC', '2026-09-19'],
      ].sort(),
    );
    const fromStored = await storedDayAnswers();
    expect([...fromStored.keys()]).toEqual([...computed.keys()]);
    expect(differingAnswers(computed, fromStored)).toEqual([]);

    // A second pass the same day has nothing more to store.
    expect((await pass(db)).reportDaysStored).toBe(0);

    // The report in the connection's own zone reads a stored day; in another zone it computes every day. So does
    // the bookings report its opened slots, and a stored week.
    const [berlin] = ids.connections as [string];
    await expectStoredRowRead(
      { table: 'utilization_day', key: 'day', column: 'offered_minutes', value: 1 },
      (tz) => offeredByDay(berlin, tz),
    );
    await expectStoredRowRead({ table: 'booking_day', key: 'day', column: 'opened', value: 1000 }, (tz) =>
      bookingsFigure(berlin, 'day', 'opened', tz),
    );
    await expectStoredRowRead({ table: 'booking_week', key: 'week', column: 'bookings', value: 1000 }, (tz) =>
      bookingsFigure(berlin, 'week', 'bookings', tz),
    );
  }, 300_000);

  it('counts the days again when a connection moves to another zone', async () => {
    const [berlin] = ids.connections as [string];
    await db.sql.query(`UPDATE connection SET timezone = 'America/New_York' WHERE id = $1::uuid`, [berlin]);
    const inNewYork = await offeredByDay(berlin, 'America/New_York');
    const openedInNewYork = await bookingsFigure(berlin, 'day', 'opened', 'America/New_York');
    // Days counted in Berlin are not used for a connection now in New York…
    expect(await offeredByDay(berlin)).toEqual(inNewYork);
    expect(await bookingsFigure(berlin, 'day', 'opened')).toEqual(openedInNewYork);
    // … and the next pass counts them again there.
    expect((await pass(db)).reportDaysStored).toBeGreaterThan(50);
    expect((await stored()).find((row) => row.connection_id === berlin)?.zone).toBe('America/New_York');
    expect(await offeredByDay(berlin)).toEqual(inNewYork);
    expect(await bookingsFigure(berlin, 'day', 'opened')).toEqual(openedInNewYork);
  }, 120_000);

  it('keeps the stored days when the slots they were counted from are pruned, and the reports still answer them', async () => {
    // Scopes that read stored days (not --tz, not --event): their answers are what they were before the prune.
    const readsStored = (key: string) => !/zone|event type/.test(key);
    const before = [...(await storedDayAnswers())].filter(([key]) => readsStored(key));
    // Each stored availability day as `connection event day`.
    const availabilityDays = async () =>
      (
        await db.sql.query<{ key: string }>(
          `SELECT connection_id || ' ' || upstream_event_id || ' ' || day AS key FROM availability_day`,
        )
      ).rows.map((row) => row.key);
    const availabilityBefore = await availabilityDays();
    // A slot of 14 August left open, as a connection that stopped syncing leaves them: never closed, so never
    // pruned, and the report from the slots would still count it.
    const [kept] = availabilityBefore.filter((key) => key.endsWith(' 2026-08-14'));
    const [keptConnection, keptEvent] = kept!.split(' ') as [string, string];
    await db.sql.query(
      `INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at)
       VALUES ($1::uuid, $2, '2026-08-14T12:00:00Z', '2026-08-14T12:30:00Z', '2026-08-10T12:00:00Z',
               '2026-08-10T12:00:00Z')`,
      [keptConnection, keptEvent],
    );
    const result = await pass(db, { ...STORE_ONLY, closedSlotDays: 30, syncRunDays: 30 });
    expect(result.closedSlots).toBeGreaterThan(0);
    const after = await storedDayAnswers();
    expect(differingAnswers(new Map(before), after)).toEqual([]);
    expect(before.length).toBeGreaterThan(40);
    // Availability days are kept as long as closed slots (30 days here): a day goes once all its slots have started,
    // and so closed, 30 days before the run, by the second UTC midnight after its date (HISTORY_NOW − 30 days is
    // 21 August, so days through the 19th go), unless a slot of it, or of the UTC days either side, is kept: the
    // open one's event type's 13th to 15th stay.
    const cutoffDay = '2026-08-19';
    const dayOf = (key: string) => key.split(' ')[2]!;
    const stays = (key: string) =>
      dayOf(key) > cutoffDay ||
      (key.startsWith(`${keptConnection} ${keptEvent} `) &&
        dayOf(key) >= '2026-08-13' &&
        dayOf(key) <= '2026-08-15');
    const availabilityAfter = await availabilityDays();
    expect(availabilityBefore.filter((key) => !stays(key)).length).toBeGreaterThan(0);
    expect(availabilityAfter.filter((key) => dayOf(key) <= cutoffDay).sort()).toEqual(
      availabilityBefore.filter((key) => dayOf(key) <= cutoffDay && stays(key)).sort(),
    );
    expect(availabilityAfter.filter((key) => dayOf(key) <= cutoffDay).length).toBe(3);
    expect(availabilityAfter.sort()).toEqual(availabilityBefore.filter(stays).sort());
    expect(result.availabilityDays).toBe(availabilityBefore.length - availabilityAfter.length);
    await db.sql.query(
      `DELETE FROM slot WHERE connection_id = $1::uuid AND starts_at = '2026-08-14T12:00:00Z'
      AND upstream_event_id = $2 AND gone_at IS NULL`,
      [keptConnection, keptEvent],
    );
  }, 300_000);

  it('skips and reports a connection whose days cannot be stored, and stores the others', async () => {
    const [berlin, kolkata] = ids.connections as [string, string];
    // A zone neither Postgres nor ICU knows: the report for it cannot count its days, nor can the run.
    await db.sql.query(`UPDATE connection SET timezone = 'Mars/Olympus_Mons' WHERE id = $1::uuid`, [berlin]);
    await db.sql.query(`DELETE FROM report_days_stored WHERE connection_id = $1::uuid`, [kolkata]);
    const failures: string[] = [];
    const result = await pruneHistory(db.prisma, STORE_ONLY, {
      now: HISTORY_NOW,
      pause: async () => undefined,
      onReportDayFailure: ({ connectionId }) => failures.push(connectionId),
    });
    expect(failures).toEqual([berlin]);
    expect(result.reportDayFailures).toBe(1);
    expect(result.reportDaysStored).toBeGreaterThan(0);
    expect((await stored()).find((row) => row.connection_id === kolkata)?.through).toBe('2026-09-19');
  }, 120_000);

  it('asks nothing of a connection until a day is over in its zone: a run an hour later touches none', async () => {
    const [berlin, kolkata, lordHowe] = ids.connections as [string, string, string];
    /** The connections a run's statements named, by the values they were sent with. */
    const connectionsTouched = async (now: Date) => {
      const named = new Set<string>();
      const statements = reportDayStatements();
      const watched = watchingStatements((values, sql) => {
        if (!statements.isReportDays(sql)) return;
        for (const value of values.flat())
          if (typeof value === 'string' && ids.connections.includes(value)) named.add(value);
      });
      await pruneHistory(watched, STORE_ONLY, { now, pause: async () => undefined });
      return [...named].sort();
    };
    // Every day stored through 19 September (Berlin back from the zone nobody knows, where the test above moved
    // it): an hour on, no connection has a day to store.
    await db.sql.query(`UPDATE connection SET timezone = 'Europe/Berlin' WHERE id = $1::uuid`, [berlin]);
    await pass(db);
    expect(await connectionsTouched(new Date(HISTORY_NOW.getTime() + 3_600_000))).toEqual([]);
    // At 20:00 UTC the 20th has been over for more than an hour in Kolkata (UTC+5:30) and Lord Howe (UTC+10:30),
    // not in Berlin or UTC.
    const evening = new Date('2026-09-20T20:00:00Z');
    expect(await connectionsTouched(evening)).toEqual([kolkata, lordHowe].sort());
    expect(await connectionsTouched(evening)).toEqual([]);
    expect(
      (await stored())
        .filter((row) => row.through === '2026-09-20')
        .map((row) => row.connection_id)
        .sort(),
    ).toEqual([kolkata, lordHowe].sort());
  }, 120_000);

  it('stores a day a run in ten statements for every connection one day behind together, with the same answers', async () => {
    const [berlin, kolkata] = ids.connections as [string, string];
    await db.sql.query(`UPDATE connection SET timezone = 'Europe/Berlin' WHERE id = $1::uuid`, [berlin]);
    await db.sql.query(
      'TRUNCATE utilization_day, booking_day, booking_week, sync_health_day, report_days_stored',
    );
    const computed = await storedDayAnswers();
    // Ten connections a batch (RETENTION_BATCH_SIZE's default): all four in one.
    const batched: RetentionSettings = { ...STORE_ONLY, batchSize: 1000 };
    await pass(db, batched, new Date(HISTORY_NOW.getTime() - 10 * DAY_MS));
    let naming = { all: 0, one: 0 };
    const statements = reportDayStatements();
    const watched = watchingStatements((values, sql) => {
      if (!statements.isReportDays(sql)) return;
      const named = new Set(values.flat().filter((value) => ids.connections.includes(value as string)));
      if (named.size === 4 && values.some((value) => Array.isArray(value))) naming.all++;
      else if (named.size === 1) naming.one++;
    });
    // A run a day, each finding every connection one day behind: the four in one batch, its ten statements
    // (the moved days' delete, the claim, the last sync-health totals, the day's sync-health figures, their
    // totals stored, the other days stored, the availability days stored, the last bookings' totals, the day's
    // bookings counted, their totals stored), and on a Monday, when the day stored is a Sunday, an eleventh, the
    // week stored; one names a single connection, the search for more after the last.
    for (let daysBack = 9; daysBack >= 0; daysBack--) {
      const now = new Date(HISTORY_NOW.getTime() - daysBack * DAY_MS);
      naming = { all: 0, one: 0 };
      statements.begin();
      const result = await pruneHistory(watched, batched, { now, pause: async () => undefined });
      expect(result.reportDayFailures).toBe(0);
      expect(naming).toEqual({ all: now.getUTCDay() === 1 ? 11 : 10, one: 1 });
    }
    expect((await stored()).every((row) => row.through === '2026-09-19')).toBe(true);
    const fromStored = await storedDayAnswers();
    expect(differingAnswers(computed, fromStored)).toEqual([]);

    // A batch that fails is stored a connection at a time: the one that fails is reported, the others stored.
    await db.sql.query(`
      CREATE FUNCTION refuse_kolkata() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.connection_id = '${kolkata}'::uuid THEN RAISE EXCEPTION 'refused for the test'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_kolkata BEFORE INSERT ON utilization_day
        FOR EACH ROW EXECUTE FUNCTION refuse_kolkata();`);
    try {
      const failures: string[] = [];
      const nextDay = await pruneHistory(db.prisma, batched, {
        now: new Date(HISTORY_NOW.getTime() + DAY_MS),
        pause: async () => undefined,
        onReportDayFailure: ({ connectionId }) => failures.push(connectionId),
      });
      expect(failures).toEqual([kolkata]);
      expect(nextDay.reportDaysStored).toBeGreaterThan(0);
      const through = new Map((await stored()).map((row) => [row.connection_id, row.through]));
      expect(through.get(kolkata)).toBe('2026-09-19');
      expect([...through].filter(([id]) => id !== kolkata).map(([, day]) => day)).toEqual([
        '2026-09-20',
        '2026-09-20',
        '2026-09-20',
      ]);
    } finally {
      await db.sql.query('DROP TRIGGER refuse_kolkata ON utilization_day; DROP FUNCTION refuse_kolkata()');
    }
  }, 300_000);

  it('keeps the stored days of a connection moved, while a run goes on, to a zone Postgres cannot count in', async () => {
    const [, kolkata] = ids.connections as [string, string];
    const now = new Date(HISTORY_NOW.getTime() + 2 * DAY_MS);
    const storedRows = async () =>
      Number(
        (
          await db.sql.query(`SELECT count(*) AS n FROM utilization_day WHERE connection_id = $1::uuid`, [
            kolkata,
          ])
        ).rows[0]?.n,
      );
    const before = await storedRows();
    expect(before).toBeGreaterThan(0);
    // The run has read the zones; then the connection moves.
    const dayPass = await beginReportDayPass(db.prisma, now);
    await db.sql.query(`UPDATE connection SET timezone = 'Mars/Olympus_Mons' WHERE id = $1::uuid`, [kolkata]);
    try {
      const batch = await storeReportDayBatch(db.prisma, dayPass, now, null, 10);
      expect(batch.failures.map((failure) => failure.connectionId)).toEqual([kolkata]);
      expect(await storedRows()).toBe(before);
      expect((await stored()).find((row) => row.connection_id === kolkata)?.zone).toBe('Asia/Kolkata');
    } finally {
      await db.sql.query(`UPDATE connection SET timezone = 'Asia/Kolkata' WHERE id = $1::uuid`, [kolkata]);
    }
  }, 120_000);
});
