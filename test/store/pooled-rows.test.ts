// The hot statements read past Prisma (store/pooled-rows.ts): the same rows as Prisma's $queryRaw for the kinds
// they read, read from the client's own pool, never past a transaction, and their failures read as Prisma's are.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Prisma } from '../../src/generated/prisma/client.js';
import { databaseSetupProblem, databaseUnavailableReason } from '../../src/store/database-errors.js';
import { pooledRows } from '../../src/store/pooled-rows.js';
import { createPrismaClient } from '../../src/store/prisma-client.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('pooled_rows');
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

/** Each kind the statements read this way return, from parameters of each kind they pass. */
const everyKind = (marker: string) => Prisma.sql`
  SELECT ${marker}::text AS "text", ${41}::int + 1 AS "int4", ${0.5}::float8 AS "float8", ${true}::bool AS "bool",
         NULL::text AS "none", ${new Date('2026-11-30T12:34:56.789Z')}::timestamptz AS "at",
         json_build_object('uid', 'u1', 'at', ${new Date('2026-11-30T01:02:03.004Z')}::timestamptz) AS "json",
         ${['a', 'b']}::text[] AS "texts", ${[1, 2]}::int[] AS "ints",
         ${[new Date('2026-12-01T00:00:00Z'), null]}::timestamptz[] AS "instants"`;

/** The backend a statement ran on: a read inside a transaction sees the transaction's own. */
const backendOf = async (rows: Promise<{ pid: number }[]>) => (await rows)[0]!.pid;

describe('pooledRows', () => {
  it('answers each kind the hot statements read as Prisma does', async () => {
    const pooled = await pooledRows(db.prisma, everyKind('pooled'));
    const throughPrisma = await db.prisma.$queryRaw<unknown[]>(everyKind('pooled'));
    expect(pooled).toEqual(throughPrisma);
    expect(pooled[0]).toMatchObject({ int4: 42, at: new Date('2026-11-30T12:34:56.789Z') });
  });

  it('reads from the pool, past Prisma: an int8 comes back as node-postgres gives it, a string', async () => {
    // The one kind the two answer apart, which is why a statement read this way casts any count it uses.
    const [pooled] = await pooledRows<{ n: unknown }>(db.prisma, Prisma.sql`SELECT 7::int8 AS n`);
    const [throughPrisma] = await db.prisma.$queryRaw<{ n: unknown }[]>(Prisma.sql`SELECT 7::int8 AS n`);
    expect(pooled!.n).toBe('7');
    expect(throughPrisma!.n).toBe(7n);
  });

  it("inside a transaction, reads on the transaction's connection and sees what it wrote", async () => {
    await db.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`CREATE TEMP TABLE pooled_rows_probe (n int) ON COMMIT DROP`;
      await tx.$executeRaw`INSERT INTO pooled_rows_probe VALUES (3)`;
      const rows = await pooledRows<{ n: number }>(tx, Prisma.sql`SELECT n FROM pooled_rows_probe`);
      expect(rows).toEqual([{ n: 3 }]);
      expect(await backendOf(pooledRows(tx, Prisma.sql`SELECT pg_backend_pid() AS pid`))).toBe(
        await backendOf(tx.$queryRaw(Prisma.sql`SELECT pg_backend_pid() AS pid`)),
      );
    });
  });

  it('still answers on a client used again after $disconnect, through Prisma and a pool of its own', async () => {
    const prisma = createPrismaClient(db.url);
    try {
      await prisma.$queryRaw`SELECT 1`;
      const [before] = await pooledRows<{ n: unknown }>(prisma, Prisma.sql`SELECT 2::int8 AS n`);
      expect(before!.n).toBe('2');
      await prisma.$disconnect();
      // The pool $disconnect ended is read past no more: Prisma answers, with its own types.
      const [after] = await pooledRows<{ n: unknown }>(prisma, Prisma.sql`SELECT 2::int8 AS n`);
      expect(after!.n).toBe(2n);
    } finally {
      await prisma.$disconnect();
    }
  });

  it('fails as Prisma does for a statement Postgres cancelled, a table not migrated, a server not there', async () => {
    const bounded = createPrismaClient(db.url, { statementTimeoutMs: 1000 });
    try {
      // Far past the bound: Postgres cancels it whatever the machine's load.
      const cancelled = await pooledRows(bounded, Prisma.sql`SELECT pg_sleep(30)`).catch((e: unknown) => e);
      expect(databaseUnavailableReason(cancelled)).toBe('statement_timeout');
    } finally {
      await bounded.$queryRaw`SELECT 1`;
      await bounded.$disconnect();
    }
    const missing = await pooledRows(db.prisma, Prisma.sql`SELECT * FROM no_such_table`).catch(
      (e: unknown) => e,
    );
    expect(databaseSetupProblem(missing)).toBe('not_migrated');
    expect(databaseUnavailableReason(missing)).toBeUndefined();
    // Nothing listens on port 1: the connection is refused, as when Postgres is down.
    const nowhere = createPrismaClient('postgresql://postgres@127.0.0.1:1/postgres');
    try {
      const refused = await pooledRows(nowhere, Prisma.sql`SELECT 1`).catch((e: unknown) => e);
      expect(databaseUnavailableReason(refused)).toBe('unreachable');
      expect(String(refused)).not.toContain('password');
    } finally {
      await nowhere.$disconnect();
    }
  });
});
