// A report reads in one snapshot (store/report-queries/report-session.ts), and may run a read beside its others on
// a second connection that sees the same snapshot: what commits meanwhile is in neither. With no second connection
// to be had (the process's at their limit, or none free in the pool), that read is queued on the report's own
// connection instead, and answers the same.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { createBesideBudget, withReportSession } from '../../src/store/report-queries/report-session.js';
import { postgresZoneNames, type ReportDb } from '../../src/store/report-queries/report-zones.js';
import { createReportStore } from '../../src/store/reports.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { patient } from '../support/patience.js';

const NOW = new Date('2026-09-20T12:00:00Z');

let db: TestDatabase;
let connectionId: string;
beforeAll(async () => {
  db = await createTestDatabase('report_session');
  const [inserted] = await db.prisma.$queryRaw<{ id: string }[]>`
    INSERT INTO connection (id, upstream_user_id, email, timezone, status, first_synced_at, updated_at)
    VALUES (gen_random_uuid(), 'usr_session', 'session@report.test', 'Europe/Berlin', 'active', '2026-09-01T00:00:00Z', now())
    RETURNING id::text AS id`;
  connectionId = inserted!.id;
  await addBookings(20);
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

/** `n` bookings detected on the 10th, each an hour long, starting a day later. */
async function addBookings(n: number): Promise<void> {
  await db.sql.query(
    `INSERT INTO booking (connection_id, detected_at, starts_at, ends_at, event_ids, slots_closed)
     SELECT $1::uuid, t, t + interval '1 day', t + interval '25 hours', ARRAY['evt_session'], 2
     FROM generate_series('2026-09-10T08:00:00Z'::timestamptz, '2026-09-10T08:00:00Z'::timestamptz + ($2::int - 1) * interval '1 minute', interval '1 minute') t`,
    [connectionId, n],
  );
}

const backendOf = async (read: ReportDb) =>
  (await read.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`)[0]!.pid;

const countBookings = async (read: ReportDb) =>
  Number((await read.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM booking`)[0]!.n);

describe('a report session', () => {
  it('runs a read beside the others on a second connection in the same snapshot: a booking committed meanwhile is in neither', async () => {
    const before = await db.prisma.booking.count();
    const scope = parseReportQuery('bookings', {}, NOW);
    const seen = await withReportSession(
      db.prisma,
      postgresZoneNames(),
      scope,
      async (tx, _, beside) => {
        const first = await countBookings(tx);
        const { answer } = await beside(async (sibling) => {
          // Its snapshot is the report's, taken before this commit; a transaction of its own would see it.
          await addBookings(3);
          return { bookings: await countBookings(sibling), backend: await backendOf(sibling) };
        });
        const { bookings, backend } = await answer;
        return {
          first,
          beside: bookings,
          after: await countBookings(tx),
          apart: backend !== (await backendOf(tx)),
        };
      },
      // However long a busy machine takes to hand it a connection: here the read must run beside.
      createBesideBudget(1, patient(60_000)),
    );
    expect(seen).toEqual({ first: before, beside: before, after: before, apart: true });
    expect(await db.prisma.booking.count()).toBe(before + 3);
  });

  it('queues a read beside the others on the report’s own connection once the process holds its second ones', async () => {
    const scope = parseReportQuery('bookings', {}, NOW);
    const budget = createBesideBudget(1);
    expect(budget.take()).toBe(true);
    const apart = await withReportSession(
      db.prisma,
      postgresZoneNames(),
      scope,
      async (tx, _, beside) => (await (await beside(backendOf)).answer) !== (await backendOf(tx)),
      budget,
    );
    expect(apart).toBe(false);
    budget.give();
    expect(budget.take()).toBe(true);
  });

  it('answers the bookings report the same while every pooled connection is taken', async () => {
    const reports = createReportStore(db.prisma);
    const query = parseReportQuery('bookings', { from: '2026-09-01', to: '2026-09-19' }, NOW);
    const expected = await reports.bookings(query);
    expect(expected.totals.bookings).toBeGreaterThan(0);
    // Nine transactions hold nine of the pool's ten connections until the report has answered; the report takes
    // the tenth, and its heat map and totals wait for it rather than for a second one.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const holding: Promise<unknown>[] = [];
    const held: Promise<void>[] = [];
    for (let i = 0; i < 9; i++) {
      let hold!: () => void;
      held.push(new Promise<void>((resolve) => (hold = resolve)));
      holding.push(
        db.prisma.$transaction(
          async (tx) => {
            await tx.$queryRaw`SELECT 1`;
            hold();
            await released;
          },
          { maxWait: 60_000, timeout: 600_000 },
        ),
      );
    }
    await Promise.all(held);
    try {
      expect(await reports.bookings(query)).toEqual(expected);
    } finally {
      release();
      await Promise.all(holding);
    }
  });
});
