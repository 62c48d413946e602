// A report over every connection whose days are stored reads, of the packed slots, only the days after the stored
// ones (issue 43): the bookings report by day computes the days not stored yet (today's, and any a retention run
// has not reached) from the history, and where those days start is looked up before its statement is built
// (stored-days.ts, withUnstoredFrom). Worked out inside the statement, that start was a subquery whose value
// Postgres could not plan with: it read every connection's packed days, 2.3 GB for a year of 10,000 connections,
// to find the two days after the stored ones. Held on the plan, not the time (timing lives in `npm run bench`,
// BENCH_ONLY=reports-year): a few connections' slots packed as the compaction packs them, their days stored as
// the retention run stores them, and the report's queries explained exactly as the store runs them. The bookings
// report by week likewise reads, of the bookings, only each connection's since its stored weeks (booking-weeks.ts),
// from the index alone. The availability report as of an instant before the stored days' end reads them
// (availability-days.ts), not the packed slots they were counted from.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Prisma } from '../../src/generated/prisma/client.js';
import { parseReportQuery, type ReportQuery } from '../../src/reports/report-query.js';
import { csvSelectIn } from '../../src/store/report-queries/csv-export.js';
import { postgresZoneNames, type ReportDb } from '../../src/store/report-queries/report-zones.js';
import { availabilityRows } from '../../src/store/report-queries/availability-rows.js';
import { bookingsRows } from '../../src/store/report-queries/bookings-rows.js';
import { storeReportDays } from '../../src/store/report-days.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { generatePackedSlots } from '../support/packed-slots.js';
import { explainReport, flattenPlan, rowsVisited, vacuumUntilAllVisible } from '../support/report-plans.js';

const NOW = new Date('2026-09-20T12:00:00Z');
const CONNECTIONS = 30;
const DAYS = 40;
const BOOKINGS_A_DAY = 2;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('after_stored_plan');
  await generatePackedSlots(db, { connections: CONNECTIONS, days: DAYS, now: NOW });
  // Bookings through the days: BOOKINGS_A_DAY detected each day, starting two days later.
  await db.prisma.$executeRaw`
    INSERT INTO booking (connection_id, detected_at, starts_at, ends_at, event_ids, slots_closed)
    SELECT c.id, t.at, t.at + interval '2 days', t.at + interval '2 days 30 minutes', ARRAY['evt_1'], 1
    FROM connection c
    CROSS JOIN generate_series(1, ${DAYS}::int) d
    CROSS JOIN generate_series(1, ${BOOKINGS_A_DAY}::int) k
    CROSS JOIN LATERAL (SELECT ${NOW}::timestamptz - d * interval '1 day' + k * interval '1 hour' AS at) t`;
  const connections = await db.prisma.connection.findMany({ select: { id: true } });
  await storeReportDays(
    db.prisma,
    connections.map(({ id }) => id),
    NOW,
  );
  // The plans below read the bookings and the stored days from their indexes alone.
  await vacuumUntilAllVisible(db, ['booking', 'availability_day']);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

// The report read as rows, and its CSV as the export writes it (the SELECT its COPY runs).
const reads: [string, (db: ReportDb, scope: ReportQuery) => Promise<unknown>][] = [
  ['read as rows', (tx, scope) => bookingsRows(tx, { ...scope, by: 'day' })],
  [
    'as CSV',
    async (tx, scope) =>
      tx.$queryRaw(Prisma.raw(await csvSelectIn(tx, { ...scope, by: 'day' }, postgresZoneNames()))),
  ],
];

describe('the bookings report by day over every connection, their days stored through yesterday', () => {
  it.each(reads)('reads of the packed slots only the days after the stored ones, %s', async (_form, read) => {
    const packedDays = await db.prisma.slotHistory.count();
    expect(packedDays).toBeGreaterThanOrEqual(CONNECTIONS * (DAYS - 1));
    const stored = await db.prisma.reportDaysStored.count({ where: { through: new Date('2026-09-19') } });
    expect(stored).toBe(CONNECTIONS);

    const explained = await explainReport(db.prisma, parseReportQuery('bookings', { by: 'day' }, NOW), read, {
      answered: true,
    });
    const nodes = explained.flatMap((query) => flattenPlan(query.Plan));
    // Slots are first seen three days before they start, so today's sightings are all of slots still live (in
    // `slot`): no packed day holds one, and none is unpacked.
    expect(rowsVisited(nodes, 'slot_history')).toBe(0);
    // And Postgres knew it when it chose the plan: the scan of the days after the stored ones (the one that ran;
    // connections without stored days have their own, here none) was expected to return no more than a day a
    // connection. With the start a subquery, it expected a share of the table by rule of thumb (115 rows here),
    // and at 10,000 connections chose to read all of it.
    const ran = nodes.filter((node) => node['Relation Name'] === 'slot_history' && node['Actual Loops'] > 0);
    expect(ran.length).toBeGreaterThan(0);
    for (const scan of ran) expect(scan['Plan Rows']).toBeLessThanOrEqual(CONNECTIONS);
  });
});

describe('the bookings report by week over every connection, their weeks stored through last Sunday', () => {
  it('reads of the bookings only those since the stored weeks, each connection by its index', async () => {
    const weeks = await db.prisma.bookingWeek.count();
    expect(weeks).toBeGreaterThanOrEqual(CONNECTIONS * 5);
    const read = async (tx: ReportDb, scope: ReportQuery) =>
      tx.$queryRaw(Prisma.raw(await csvSelectIn(tx, { ...scope, by: 'week' }, postgresZoneNames())));
    const explained = await explainReport(
      db.prisma,
      parseReportQuery('bookings', { by: 'week' }, NOW),
      read,
      {
        answered: true,
      },
    );
    const nodes = explained.flatMap((query) => flattenPlan(query.Plan));
    // NOW is a Sunday: the weeks are stored through the one before, so a connection's bookings since then are
    // those of the last six days and today's (by their detection in Berlin), of the 40 days' it has.
    const total = await db.prisma.booking.count();
    expect(total).toBe(CONNECTIONS * DAYS * BOOKINGS_A_DAY);
    expect(rowsVisited(nodes, 'booking')).toBeLessThanOrEqual(CONNECTIONS * 8 * BOOKINGS_A_DAY);
    // From the index alone, which holds what a week reads of a booking: no heap page of the table.
    const scans = nodes.filter((node) => node['Relation Name'] === 'booking');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan['Node Type']).toBe('Index Only Scan');
  });
});

describe('the bookings report by booking over every connection, its first rows (the admin page)', () => {
  it('reads the bookings of the first connections in order, not every booking', async () => {
    const firstRows = 100;
    const explained = await explainReport(
      db.prisma,
      parseReportQuery('bookings', { by: 'booking' }, NOW),
      (tx, scope: ReportQuery) => bookingsRows(tx, { ...scope, by: 'booking', firstRows }),
      { answered: true },
    );
    // The rows' statement, beside the totals' (which read the stored days and the bookings after them).
    const rowsStatement = explained.filter((query) => query.Plan['Node Type'] === 'Limit');
    expect(rowsStatement).toHaveLength(1);
    // A connection holds DAYS × BOOKINGS_A_DAY bookings: a hundred rows are the first two connections' (with the
    // third's looked at to be sure), where ordering every booking read all of them (2,400) to keep a hundred.
    const perConnection = DAYS * BOOKINGS_A_DAY;
    const read = rowsVisited(flattenPlan(rowsStatement[0]!.Plan), 'booking');
    expect(read).toBeGreaterThanOrEqual(firstRows);
    expect(read).toBeLessThanOrEqual(Math.ceil(firstRows / perConnection + 1) * perConnection);
  });
});

describe('the availability report over every connection as of ten days back, their days stored through yesterday', () => {
  const availabilityReads: [string, (db: ReportDb, scope: ReportQuery) => Promise<unknown>][] = [
    ['read as rows', (tx, scope) => availabilityRows(tx, scope)],
    [
      'as CSV',
      async (tx, scope) => tx.$queryRaw(Prisma.raw(await csvSelectIn(tx, { ...scope }, postgresZoneNames()))),
    ],
  ];
  it.each(availabilityReads)('reads the stored days and no packed slot, %s', async (_form, read) => {
    const stored = await db.prisma.availabilityDay.count();
    expect(stored).toBeGreaterThanOrEqual(CONNECTIONS * 3 * (DAYS - 2));
    const query = parseReportQuery('availability', { at: '2026-09-10T09:30:00Z' }, NOW);
    // Slots are first seen three days ahead: as of T, each connection's event types have slots free on T's day
    // and the three after it, all of them stored.
    const rows = (await availabilityRows(db.prisma, query)).length;
    expect(rows).toBe(CONNECTIONS * 3 * 4);
    const explained = await explainReport(db.prisma, query, read, { answered: true });
    const nodes = explained.flatMap((explainedQuery) => flattenPlan(explainedQuery.Plan));
    // Before the days were stored in this form, the report unpacked every slot of those four days of each
    // connection (in two UTC days each): 30 × 5 packed days. Now none is unpacked: of the days after the stored
    // ones, a connection's one packed day is looked at and dropped by its first sighting, after T.
    const packedScans = nodes.filter((node) => node['Relation Name'] === 'slot_history');
    const unpacked = packedScans.reduce((sum, node) => sum + node['Actual Rows'] * node['Actual Loops'], 0);
    expect(unpacked).toBe(0);
    expect(rowsVisited(nodes, 'slot_history')).toBeLessThanOrEqual(CONNECTIONS);
    // Of the stored days, T's and those whose slots could have been seen by T (three days ahead), not every day from
    // T's to yesterday (ten).
    // Each connection's days are read by event type (the key's order), its event types listed with its marks: the
    // table is read by those scans alone.
    const dayScans = nodes.filter(
      (node) => node['Relation Name'] === 'availability_day' && /\bday\b/.test(node['Index Cond'] ?? ''),
    );
    const storedRead = rowsVisited(dayScans, 'availability_day');
    expect(storedRead).toBeGreaterThanOrEqual(rows);
    expect(storedRead).toBeLessThanOrEqual(CONNECTIONS * 3 * 4);
    const probes = rowsVisited(
      nodes.filter((node) => !dayScans.includes(node)),
      'availability_day',
    );
    expect(probes).toBe(0);
    // Every day's lists are short here: all read from the covering index alone (its predicate is the report's,
    // LISTS_INDEXED), none from the table.
    const withRows = dayScans.filter((node) => node['Actual Rows'] > 0);
    expect(withRows.map((node) => [node['Node Type'], node['Index Name'], node['Heap Fetches']])).toEqual(
      withRows.map(() => ['Index Only Scan', 'availability_day_lists_idx', 0]),
    );
    expect(withRows.length).toBeGreaterThan(0);
    // And the days too long for it through the other index: the report's bound is the index's both ways (a lower
    // one would leave some days to a scan of the whole key, a higher one the index unused).
    expect(new Set(dayScans.map((node) => node['Index Name']))).toEqual(
      new Set(['availability_day_lists_idx', 'availability_day_long_lists_idx']),
    );
  });
});
