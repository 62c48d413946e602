// A CalDAV destination's log: what happened to it, newest last (pushes, failures, repairs, conflicts, new
// credentials), as its pages and `slotfeed destinations log` show it. A push appends in the statement that ends
// it (caldav-push-records.ts); each worker trims the logs of the destinations it pushed, once a minute.
import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import { DESTINATION_ID } from './caldav-destination-records.js';

export interface DestinationLogEntry {
  at: Date;
  /** push, repair-created, repair-restored, repair-deleted, conflict, failure, credentials … */
  kind: string;
  uid: string | null;
  message: string;
}

/** Log entries kept per destination. */
export const LOG_KEPT = 500;

export interface CaldavDestinationLog {
  /** Appends to the destination's log (trimLogs drops the oldest beyond LOG_KEPT). */
  log(destinationId: string, entries: readonly Omit<DestinationLogEntry, 'at'>[], now: Date): Promise<void>;
  /** The latest entries, newest first. */
  logOf(destinationId: string, limit?: number): Promise<DestinationLogEntry[]>;
  /** Drops these destinations' log entries beyond their newest LOG_KEPT, in one statement (a worker's chore). */
  trimLogs(destinationIds: readonly string[]): Promise<number>;
}

export function createCaldavDestinationLog(prisma: PrismaClient): CaldavDestinationLog {
  return {
    async log(destinationId, entries, now) {
      if (entries.length === 0) return;
      // The entries of one call a millisecond apart, so the log reads in the array's order. Trimmed to
      // LOG_KEPT in batches (trimLogs), not here: a push writes no more than one statement for its log.
      await prisma.caldavDestinationLog.createMany({
        data: entries.map((entry, i) => ({
          id: randomUUID(),
          destinationId,
          at: new Date(now.getTime() + i),
          kind: entry.kind,
          uid: entry.uid,
          message: entry.message,
        })),
      });
    },

    async logOf(destinationId, limit = 50) {
      if (!DESTINATION_ID.test(destinationId)) return [];
      return prisma.caldavDestinationLog.findMany({
        where: { destinationId },
        orderBy: [{ at: 'desc' }],
        take: limit,
        select: { at: true, kind: true, uid: true, message: true },
      });
    },

    async trimLogs(destinationIds) {
      const ids = destinationIds.filter((id) => DESTINATION_ID.test(id));
      if (ids.length === 0) return 0;
      return prisma.$executeRaw`
        DELETE FROM "caldav_destination_log" l
        USING (
          SELECT "id" FROM (
            SELECT "id", row_number() OVER (PARTITION BY "destination_id" ORDER BY "at" DESC) AS "rank"
            FROM "caldav_destination_log" WHERE "destination_id" = ANY(${ids}::uuid[])
          ) ranked WHERE ranked."rank" > ${LOG_KEPT}
        ) old
        WHERE l."id" = old."id"`;
    },
  };
}
