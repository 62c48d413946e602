// What one feed shows, read from the snapshots: the connection's state, its current event types and the open
// slots in the feed's window. All of it is read in one REPEATABLE READ transaction: a sync committing between
// two of the reads would otherwise pair slots of version n+1 with feedVersion n, and the web layer would cache
// (and serve under one strong ETag) bytes that another replica renders differently.
import { DateTime, IANAZone } from 'luxon';
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import type { FeedEventType, FeedSlot } from '../feeds/feed-model.js';
import { ConnectionNotFoundError } from './connections.js';
import { FEED_CONNECTION_STATE, type FeedConnectionState, type FeedRecord } from './feeds.js';

export interface FeedContent {
  connection: FeedConnectionState;
  /** Current versions of the connection's event types (of the feed's one event type, if it has one). */
  eventTypes: Map<string, FeedEventType>;
  /** Open slots of enabled event types in [windowStart, windowEnd), by start then event type; ≤ maxEvents. */
  slots: FeedSlot[];
  windowStart: Date;
  windowEnd: Date;
  /** The window's first date, 'YYYY-MM-DD' in the connection's zone: part of the render cache key. */
  windowKey: string;
}

export interface FeedWindow {
  windowStart: Date;
  windowEnd: Date;
  windowKey: string;
}

/**
 * From the start of today in the zone (UTC when unknown or invalid) to the same local time `days` later: days
 * are calendar days, so a window across a DST change is 23 or 25 hours longer than days × 24 h … or shorter.
 */
function computeFeedWindow(now: Date, zone: string | null, days: number): FeedWindow & { dayEnd: number } {
  const zoneName = zone && IANAZone.isValidZone(zone) ? zone : 'UTC';
  const start = DateTime.fromJSDate(now, { zone: zoneName }).startOf('day');
  return {
    windowStart: start.toJSDate(),
    windowEnd: start.plus({ days }).toJSDate(),
    windowKey: start.toISODate() ?? now.toISOString().slice(0, 10),
    dayEnd: start.plus({ days: 1 }).toMillis(),
  };
}

// Every feed request needs its window, and luxon's zone arithmetic costs more than the rest of a cached
// request: a window holds until its local day ends.
const MAX_REMEMBERED_WINDOWS = 1_000;
const windows = new Map<string, FeedWindow & { dayEnd: number }>();

export function feedWindow(now: Date, zone: string | null, days: number): FeedWindow {
  const key = `${zone ?? ''}\u0000${days}`;
  const at = now.getTime();
  let window = windows.get(key);
  if (window === undefined || at < window.windowStart.getTime() || at >= window.dayEnd) {
    if (windows.size >= MAX_REMEMBERED_WINDOWS) windows.clear();
    window = computeFeedWindow(now, zone, days);
    windows.set(key, window);
  }
  const { windowStart, windowEnd, windowKey } = window;
  return { windowStart, windowEnd, windowKey };
}

export async function readFeedContent(
  prisma: PrismaClient,
  feed: FeedRecord,
  settings: { now: Date; defaultDays: number; maxEvents: number },
): Promise<FeedContent> {
  return prisma.$transaction(
    async (tx) => {
      const connection = await tx.connection.findUnique({
        where: { id: feed.connectionId },
        select: FEED_CONNECTION_STATE,
      });
      if (!connection) throw new ConnectionNotFoundError(feed.connectionId);

      const window = feedWindow(settings.now, connection.timezone, feed.options.days ?? settings.defaultDays);
      const eventTypeRows = await tx.eventType.findMany({
        where: {
          connectionId: connection.id,
          validTo: null,
          ...(feed.upstreamEventId !== null ? { upstreamEventId: feed.upstreamEventId } : {}),
        },
        orderBy: [{ upstreamEventId: 'asc' }, { id: 'asc' }],
      });
      const eventTypes = new Map<string, FeedEventType>(
        eventTypeRows.map((row) => [
          row.upstreamEventId,
          { title: row.title, durationMinutes: row.durationMinutes, url: row.url, color: row.color },
        ]),
      );
      const enabledIds = eventTypeRows.filter((row) => row.enabled).map((row) => row.upstreamEventId);
      const slotRows =
        enabledIds.length === 0 || settings.maxEvents <= 0
          ? []
          : await tx.slot.findMany({
              where: {
                connectionId: connection.id,
                goneAt: null,
                upstreamEventId: { in: enabledIds },
                startsAt: { gte: window.windowStart, lt: window.windowEnd },
              },
              orderBy: [{ startsAt: 'asc' }, { upstreamEventId: 'asc' }, { id: 'asc' }],
              take: Math.floor(settings.maxEvents),
              select: {
                upstreamEventId: true,
                startsAt: true,
                endsAt: true,
                sequence: true,
                firstSeenAt: true,
                lastChangedAt: true,
              },
            });
      return {
        connection,
        eventTypes,
        slots: slotRows.map(({ upstreamEventId, ...slot }) => ({ eventId: upstreamEventId, ...slot })),
        ...window,
      };
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
  );
}
