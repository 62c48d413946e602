// The scheduler tick's query: the active connections that are due, earliest first, a page at a time. Declared
// once, here, as SQL: the store runs it, and the test that holds its plan (test/sync/tick-plan.test.ts) and the
// tick bench explain exactly this text. It reads by the (status, next_sync_at) index, so its cost is the rows
// due, however many are kept. Pages follow each other by keyset, (next_sync_at, id) after the last row's: an
// offset would read every earlier page again, and a page of connections that cannot go (their jobs queued
// already) must not hide the ones behind it.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';

export interface DueConnectionRow {
  id: string;
  bandState: unknown;
  pullCoverage: unknown;
  nextSyncAt: Date;
}

/** Where the previous page ended: its last row. */
export type DuePageCursor = Pick<DueConnectionRow, 'id' | 'nextSyncAt'>;

export function dueConnectionsQuery(now: Date, limit: number, after?: DuePageCursor): Prisma.Sql {
  // The plain bound on next_sync_at is what the index can seek to; the row comparison only breaks ties.
  const afterCursor = after
    ? Prisma.sql`AND next_sync_at >= ${after.nextSyncAt}::timestamptz
        AND (next_sync_at, id) > (${after.nextSyncAt}::timestamptz, ${after.id}::uuid)`
    : Prisma.empty;
  return Prisma.sql`
    SELECT id, band_state AS "bandState", pull_coverage AS "pullCoverage", next_sync_at AS "nextSyncAt"
    FROM connection
    WHERE status = 'active' AND next_sync_at <= ${now}::timestamptz ${afterCursor}
    ORDER BY next_sync_at, id
    LIMIT ${limit}::int`;
}

export function findDueConnections(
  prisma: PrismaClient,
  now: Date,
  limit: number,
  after?: DuePageCursor,
): Promise<DueConnectionRow[]> {
  return prisma.$queryRaw<DueConnectionRow[]>(dueConnectionsQuery(now, limit, after));
}
