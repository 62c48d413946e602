// Each pooled connection keeps slotfeed's statements prepared (lib/prepared-statements.ts): a statement run again
// on a connection is not parsed and planned again. Postgres's own catalog of a session's prepared statements
// (pg_prepared_statements) says what it kept and how it planned each call.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Prisma, type PrismaClient } from '../../src/generated/prisma/client.js';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { MOST_PARAMETERS_NAMED, statementNames } from '../../src/lib/prepared-statements.js';
import { createPrismaClient } from '../../src/store/prisma-client.js';
import { withReportSession } from '../../src/store/report-queries/report-session.js';
import { postgresZoneNames } from '../../src/store/report-queries/report-zones.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('prepared_statements');
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

/** One pooled connection, held by an interactive transaction. */
type Session = Pick<Prisma.TransactionClient, '$queryRaw'>;

interface Prepared {
  marker: string;
  customPlans: number;
  genericPlans: number;
}

/** The statements this session keeps prepared that carry a marker (statement below), by marker. */
async function preparedHere(session: Session): Promise<Prepared[]> {
  // The marker's opening written in two parts, so that this statement, once prepared, is not among them.
  const rows = await session.$queryRaw<{ statement: string; custom_plans: bigint; generic_plans: bigint }[]>`
    SELECT statement, custom_plans, generic_plans FROM pg_prepared_statements
    WHERE strpos(statement, '/* ' || 'marker ') > 0`;
  return rows
    .map((row) => ({
      marker: /\/\* marker (\w+)/.exec(row.statement)![1]!,
      customPlans: Number(row.custom_plans),
      genericPlans: Number(row.generic_plans),
    }))
    .sort((a, b) => a.marker.localeCompare(b.marker));
}

/** A statement of one parameter, its text told apart by `marker` (each test's own: the pool's connections live on). */
const statement = (session: Session, marker: string, n: number) =>
  session.$queryRaw(Prisma.sql`SELECT ${n}::int AS n ${Prisma.raw(`/* marker ${marker} */`)}`);

/** Runs `work` on one pooled connection (an interactive transaction holds it) and says what it kept prepared. */
function onOneConnection(prisma: PrismaClient, work: (session: Session) => Promise<void>) {
  return prisma.$transaction(async (tx) => {
    await work(tx);
    return preparedHere(tx);
  });
}

/** Only the markers of `names` (another test's may be on the same connection). */
const only = (names: string[], prepared: Prepared[]) =>
  prepared.filter(({ marker }) => names.includes(marker));

describe('prepared statements', () => {
  it('prepares a statement once on a connection from its second call: run three times, it was parsed twice and planned for each call', async () => {
    const prepared = await onOneConnection(db.prisma, async (session) => {
      for (const n of [1, 2, 3]) await statement(session, 'thrice', n);
    });
    expect(only(['thrice'], prepared)).toEqual([{ marker: 'thrice', customPlans: 2, genericPlans: 0 }]);
  });

  it('names a text at its second call, no more texts than its limit, one name for each; past it, at 0, or for a long list of parameters, statements go unnamed', async () => {
    const names = statementNames(2)!;
    const twice = (sql: string, args: unknown[] = []) => [names({ sql, args }), names({ sql, args })];
    // A list written out a parameter an element, longer than any statement slotfeed writes by hand: never named.
    const many = Array.from({ length: MOST_PARAMETERS_NAMED + 1 }, (_, i) => i);
    expect(twice(`SELECT ${many.map((i) => `$${i + 1}`).join(', ')}`, many)).toEqual(['', '']);
    const [onceA, a] = twice('SELECT 1');
    const [onceB, b] = twice('SELECT 2');
    expect([onceA, onceB]).toEqual(['', '']);
    expect(a).toMatch(/^sf_/);
    expect(b).toMatch(/^sf_/);
    expect(a).not.toBe(b);
    expect(twice('SELECT 3')).toEqual(['', '']);
    expect(names({ sql: 'SELECT 1', args: [] })).toBe(a);
    expect(statementNames(0)).toBeUndefined();

    const none = createPrismaClient(db.url, { preparedStatements: 0 });
    try {
      const prepared = await onOneConnection(none, async (session) => {
        await statement(session, 'unnamed', 1);
        await statement(session, 'unnamed', 2);
      });
      expect(prepared).toEqual([]);
    } finally {
      await none.$disconnect();
    }
  });

  it('plans a report’s statements for their own values every time, where other work may keep one generic plan', async () => {
    const scope = parseReportQuery('bookings', {}, new Date('2026-09-20T12:00:00Z'));
    const tenTimes = (marker: string) => async (session: Session) => {
      for (let n = 0; n < 10; n++) await statement(session, marker, n);
    };
    const inReport = await withReportSession(db.prisma, postgresZoneNames(), scope, async (tx) => {
      await tenTimes('report')(tx);
      return preparedHere(tx);
    });
    expect(only(['report'], inReport)).toEqual([{ marker: 'report', customPlans: 9, genericPlans: 0 }]);
    // Such a statement elsewhere: Postgres settles on one plan for every value after five.
    const elsewhere = await onOneConnection(db.prisma, tenTimes('elsewhere'));
    expect(only(['elsewhere'], elsewhere)).toEqual([
      { marker: 'elsewhere', customPlans: 5, genericPlans: 4 },
    ]);
  });
});
