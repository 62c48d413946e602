// A Postgres whose TimeZone is not UTC (a managed server set to its region's zone, say): Prisma's node-postgres
// adapter sends a JavaScript Date as a UTC wall time without its zone ('2026-09-20 12:34:56.789'), which Postgres
// reads in the session's TimeZone, so every instant slotfeed wrote or asked about would move by the zone's offset.
// Each pooled connection works in UTC (prisma-client.ts), so instants are kept and compared as they are.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { createPrismaClient } from '../../src/store/prisma-client.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

const INSTANT = new Date('2026-09-20T12:34:56.789Z');

let db: TestDatabase;
let prisma: PrismaClient;

beforeAll(async () => {
  db = await createTestDatabase('server_time_zone');
  // The database's own default, as a server configured in New York would have it, for connections made after this.
  await db.sql.query(`ALTER DATABASE "${db.name}" SET TimeZone = 'America/New_York'`);
  prisma = createPrismaClient(db.url);
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

describe('a Postgres whose TimeZone is not UTC', () => {
  it('keeps an instant Prisma writes as that instant', async () => {
    const written = await prisma.connection.create({
      data: { upstreamUserId: 'usr_new_york', accessExpiresAt: INSTANT },
      select: { id: true },
    });
    // Read past Prisma, by a client that writes and reads instants with their offsets (node-postgres's own).
    const stored = await db.sql.query<{ ms: number }>(
      `SELECT (extract(epoch FROM access_expires_at) * 1000)::float8 AS ms FROM connection WHERE id = $1`,
      [written.id],
    );
    expect(new Date(stored.rows[0]!.ms).toISOString()).toBe(INSTANT.toISOString());
    const read = await prisma.connection.findUniqueOrThrow({ where: { id: written.id } });
    expect(read.accessExpiresAt?.toISOString()).toBe(INSTANT.toISOString());
  });

  it('reads an instant a raw statement binds as that instant', async () => {
    const rows = await prisma.$queryRaw<{ ms: number }[]>`
      SELECT (extract(epoch FROM ${INSTANT}::timestamptz) * 1000)::float8 AS ms`;
    expect(rows[0]!.ms).toBe(INSTANT.getTime());
  });
});
