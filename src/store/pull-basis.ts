// What a scheduled pull reads of the stored snapshot before it asks the upstream anything: the account's zone
// and event types as last read (a pull that does not read the account again asks in that zone, for those event
// types), when the account was last read (pull_coverage's event types), and the open slots on the dates it is
// about to pull (which dates it may ask for directly, and whether a slot went missing), and which dates of the
// horizon hold an open slot at all (bands count those dates, sync/cadence-bands.ts). Outside the commit's
// transaction: a plan, not a decision; the commit reads what it decides by again under the connection's lock.
import type { PrismaClient } from '../generated/prisma/client.js';
import { zoneDaysBetween } from '../lib/zone-days.js';
import { readPullCoverage } from './pull-coverage.js';

export interface StoredEventType {
  upstreamEventId: string;
  enabled: boolean;
  durationMinutes: number;
}

export interface PullBasis {
  /** The zone the account was last read in; null when it never was. */
  zone: string | null;
  /** The event types as last read (current versions), enabled or not. */
  eventTypes: StoredEventType[];
  /** When the pull that last read the account (profile and event types) began; null: never. */
  accountReadAt: Date | null;
}

export interface StoredOpenSlot {
  eventId: string;
  startsAt: Date;
}

export async function readPullBasis(prisma: PrismaClient, connectionId: string): Promise<PullBasis> {
  const connection = await prisma.connection.findUnique({
    where: { id: connectionId },
    select: { timezone: true, pullCoverage: true },
  });
  const eventTypes = await prisma.eventType.findMany({
    where: { connectionId, validTo: null },
    select: { upstreamEventId: true, enabled: true, durationMinutes: true },
  });
  const readAtMs = readPullCoverage(connection?.pullCoverage).eventTypesPulledAtMs;
  return {
    zone: connection?.timezone ?? null,
    eventTypes,
    accountReadAt: readAtMs === null ? null : new Date(readAtMs),
  };
}

/** The connection's open slots starting in [from, until). */
export async function readOpenSlotsBetween(
  prisma: PrismaClient,
  connectionId: string,
  from: Date,
  until: Date,
): Promise<StoredOpenSlot[]> {
  const rows = await prisma.slot.findMany({
    where: { connectionId, goneAt: null, startsAt: { gte: from, lt: until } },
    select: { upstreamEventId: true, startsAt: true },
  });
  return rows.map((row) => ({ eventId: row.upstreamEventId, startsAt: row.startsAt }));
}

/**
 * The dates (YYYY-MM-DD in `zone`) holding an open slot that starts in [from, until): the dates people can book,
 * as the last pulls left them. One row per date, not per slot: near bands ask this every few minutes. The dates
 * and the instants they begin are luxon's (lib/zone-days.ts); Postgres only puts each slot between two of those
 * instants (width_bucket), so a zone its tzdata lacks reads the same.
 */
export async function readOpenDates(
  prisma: PrismaClient,
  connectionId: string,
  zone: string,
  from: Date,
  until: Date,
): Promise<Set<string>> {
  const days = zoneDaysBetween(zone, from, until);
  if (days.length === 0) return new Set();
  const starts = days.map((day) => day.startsAt.toISOString());
  // Bucket i (1-based) holds the slots from the start of days[i - 1] to the start of the next day.
  const rows = await prisma.$queryRaw<{ day: number }[]>`
    SELECT DISTINCT width_bucket(starts_at, ${starts}::timestamptz[]) AS day
    FROM slot
    WHERE connection_id = ${connectionId}::uuid AND gone_at IS NULL AND starts_at >= ${from} AND starts_at < ${until}`;
  return new Set(rows.flatMap((row) => days[Number(row.day) - 1]?.date ?? []));
}
