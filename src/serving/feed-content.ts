// What one feed shows, read from the snapshots: the connection's state, its current event types and every
// open slot of the included event types in the feed's window (read whole: the cap applies to events, after
// merging, in feed-events.ts). All of it is read in one REPEATABLE READ transaction: a sync committing between
// two of the reads would otherwise pair slots of version n+1 with feedVersion n, and the web layer would cache
// (and serve under one strong ETag) bytes that another replica renders differently.
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import { ConnectionNotFoundError } from '../store/connections.js';
import type { FeedRecord } from '../store/feeds.js';
import {
  includedEventIds,
  type FeedBooking,
  type FeedEventType,
  type FeedSlot,
} from '../feeds/feed-model.js';
import { showsBusy, viewOf } from '../feeds/feed-options.js';
import { FEED_CONNECTION_INPUTS, type FeedConnectionState } from './feed-inputs.js';
import { feedWindow, type FeedWindow } from './feed-window.js';

export interface FeedContent extends FeedWindow {
  connection: FeedConnectionState;
  /** Current versions of the event types the feed may show (enabled; secret ones only when named). */
  eventTypes: Map<string, FeedEventType>;
  /** Open slots of those event types in [windowStart, windowEnd), by start then event type. */
  slots: FeedSlot[];
  /** Busy views: inferred bookings that closed slots of those event types, starting in the window. */
  bookings: FeedBooking[];
}

/** The columns a feed reads of an event type. */
export const FEED_EVENT_TYPE_COLUMNS = {
  upstreamEventId: true,
  title: true,
  durationMinutes: true,
  url: true,
  color: true,
  enabled: true,
  secret: true,
} as const satisfies Prisma.EventTypeSelect;

/** The columns a feed reads of a slot. */
export const FEED_SLOT_COLUMNS = {
  upstreamEventId: true,
  startsAt: true,
  endsAt: true,
  sequence: true,
  firstSeenAt: true,
  lastChangedAt: true,
} as const satisfies Prisma.SlotSelect;

type EventTypeRow = Prisma.EventTypeGetPayload<{ select: typeof FEED_EVENT_TYPE_COLUMNS }>;
type SlotRow = Prisma.SlotGetPayload<{ select: typeof FEED_SLOT_COLUMNS }>;

/** Event type rows as the renderer takes them, by upstream id. */
export function eventTypesById(rows: readonly EventTypeRow[]): Map<string, FeedEventType> {
  return new Map(rows.map(({ upstreamEventId, ...eventType }) => [upstreamEventId, eventType]));
}

export const feedSlotOf = ({ upstreamEventId, ...slot }: SlotRow): FeedSlot => ({
  eventId: upstreamEventId,
  ...slot,
});

export async function readFeedContent(
  prisma: PrismaClient,
  feed: Pick<FeedRecord, 'connectionId' | 'upstreamEventId' | 'options'>,
  settings: { now: Date; defaultDays: number; window?: FeedWindow },
): Promise<FeedContent> {
  const connectionId = feed.connectionId ?? '';
  return prisma.$transaction(
    async (tx) => {
      const connection = await tx.connection.findUnique({
        where: { id: connectionId },
        select: FEED_CONNECTION_INPUTS,
      });
      if (!connection) throw new ConnectionNotFoundError(connectionId);

      // A feed's rolling window, unless the caller (the JSON API) asks for a range of its own.
      const window =
        settings.window ??
        feedWindow(settings.now, connection.timezone, feed.options.days ?? settings.defaultDays);
      const eventTypeRows = await tx.eventType.findMany({
        where: {
          connectionId: connection.id,
          validTo: null,
          ...(feed.upstreamEventId !== null ? { upstreamEventId: feed.upstreamEventId } : {}),
        },
        orderBy: [{ upstreamEventId: 'asc' }, { id: 'asc' }],
        select: FEED_EVENT_TYPE_COLUMNS,
      });
      const current = eventTypesById(eventTypeRows);
      const included = includedEventIds(current, feed.upstreamEventId);
      const eventTypes = new Map([...current].filter(([id]) => included.has(id)));
      const slotRows =
        included.size === 0
          ? []
          : await tx.slot.findMany({
              where: {
                connectionId: connection.id,
                goneAt: null,
                upstreamEventId: { in: [...included] },
                startsAt: { gte: window.windowStart, lt: window.windowEnd },
              },
              orderBy: [{ startsAt: 'asc' }, { upstreamEventId: 'asc' }, { id: 'asc' }],
              select: FEED_SLOT_COLUMNS,
            });
      const bookings =
        included.size === 0 || !showsBusy(viewOf(feed.options))
          ? []
          : await tx.booking.findMany({
              where: {
                connectionId: connection.id,
                eventIds: { hasSome: [...included] },
                startsAt: { gte: window.windowStart, lt: window.windowEnd },
              },
              orderBy: [{ startsAt: 'asc' }, { id: 'asc' }],
              select: { startsAt: true, endsAt: true, detectedAt: true },
            });
      return {
        connection,
        eventTypes,
        slots: slotRows.map(feedSlotOf),
        bookings,
        ...window,
      };
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
  );
}
