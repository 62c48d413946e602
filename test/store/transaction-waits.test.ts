// Interactive transactions on a busy machine: Prisma's defaults give a transaction 2 s to start (a pooled
// connection and BEGIN) and 5 s to finish, and at a load of 7 on 2 cores the demo's stop logged "Unable to start
// a transaction in the given time" at error level (the webhook dispatcher's hand-over). The client every role
// uses (createPrismaClient) waits for a connection held by others, and lets a slow transaction finish.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { patient } from '../support/patience.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('transaction_waits');
});
afterAll(async () => {
  await db?.drop();
});

// node-postgres's pool, which the adapter uses, holds 10 connections.
const POOL_SIZE = 10;

describe('createPrismaClient’s transactions', () => {
  it(
    'start once a connection frees up, though every one is held for 3 s',
    async () => {
      const holders = Array.from({ length: POOL_SIZE }, () =>
        db.prisma.$transaction(async (tx) => {
          await tx.$executeRaw`SELECT pg_sleep(3)`;
        }),
      );
      // Given a moment to take every connection first.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const waited = db.prisma.$transaction(async (tx) => tx.$queryRaw<{ one: number }[]>`SELECT 1 AS one`);
      await expect(waited).resolves.toEqual([{ one: 1 }]);
      await Promise.all(holders);
    },
    patient(30_000),
  );

  it(
    'finish when their work takes 6 s',
    async () => {
      const slow = db.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_sleep(6)`;
        return tx.$queryRaw<{ one: number }[]>`SELECT 1 AS one`;
      });
      await expect(slow).resolves.toEqual([{ one: 1 }]);
    },
    patient(30_000),
  );
});
