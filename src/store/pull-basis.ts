// What a scheduled pull reads of the stored snapshot before it asks the upstream anything: the account's zone
// and event types as last read (a pull that does not read the account again asks in that zone, for those event
// types), when the account was last read (pull_coverage's event types), and the open slots on the dates it is
// about to pull (which dates it may ask for directly, and whether a slot went missing), and which dates of the
// horizon hold an open slot at all (bands count those dates, sync/cadence-bands.ts). Outside the commit's
// transaction: a plan, not a decision; the commit reads what it decides by again under the connection's lock.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { zoneDaysBetween } from '../lib/zone-days.js';
import { pooledRows } from './pooled-rows.js';
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

// The reads of a scheduled pull's plan run before every one of them, outside a transaction: from the pool, past
// Prisma's query interpreter (pooled-rows.ts), each some 0.15 ms of CPU less; the basis is one statement, not two.
export async function readPullBasis(prisma: PrismaClient, connectionId: string): Promise<PullBasis> {
  const [row] = await pooledRows<{
    timezone: string | null;
    pull_coverage: unknown;
    event_types: StoredEventType[];
  }>(
    prisma,
    Prisma.sql`
      SELECT c.timezone, c.pull_coverage,
             (SELECT coalesce(json_agg(json_build_object('upstreamEventId', e.upstream_event_id,
                                                         'enabled', e.enabled,
                                                         'durationMinutes', e.duration_minutes)), '[]')
              FROM event_type e WHERE e.connection_id = c.id AND e.valid_to IS NULL) AS event_types
      FROM connection c WHERE c.id = ${connectionId}::uuid`,
  );
  const readAtMs = readPullCoverage(row?.pull_coverage).eventTypesPulledAtMs;
  return {
    zone: row?.timezone ?? null,
    eventTypes: row?.event_types ?? [],
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
  return pooledRows<StoredOpenSlot>(
    prisma,
    Prisma.sql`
      SELECT upstream_event_id AS "eventId", starts_at AS "startsAt" FROM slot
      WHERE connection_id = ${connectionId}::uuid AND gone_at IS NULL AND starts_at >= ${from} AND starts_at < ${until}`,
  );
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
  const rows = await pooledRows<{ day: number }>(
    prisma,
    Prisma.sql`
      SELECT DISTINCT width_bucket(starts_at, ${starts}::timestamptz[]) AS day
      FROM slot
      WHERE connection_id = ${connectionId}::uuid AND gone_at IS NULL AND starts_at >= ${from} AND starts_at < ${until}`,
  );
  return new Set(rows.flatMap((row) => days[Number(row.day) - 1]?.date ?? []));
}
