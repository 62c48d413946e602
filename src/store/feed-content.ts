// What feeds and the JSON API read of the snapshots: a connection's declared state, its current event types,
// and its open slots and inferred bookings in a window; a team's declared state and each member's event types
// and slots. Each read of content is one REPEATABLE READ transaction: a sync committing between two of the
// reads would otherwise pair slots of version n+1 with feedVersion n, and the web layer would cache (and serve
// under one strong ETag) bytes that another replica renders differently.
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import type { FeedConnectionState, FeedTeamState } from '../feeds/feed-inputs.js';
import {
  includedEventIds,
  type FeedBooking,
  type FeedEventType,
  type FeedSlot,
} from '../feeds/feed-model.js';
import { currentEventTypes } from './connection-admin.js';
import { ConnectionNotFoundError } from './connections.js';
import { FEED_CONNECTION_SELECT, FEED_TEAM_SELECT, teamStateOf } from './feed-inputs.js';
import { TeamNotFoundError } from './teams.js';

/** The instants content is read between: slots and bookings starting in [windowStart, windowEnd). */
export interface ContentWindow {
  windowStart: Date;
  windowEnd: Date;
}

export interface ConnectionContentQuery {
  connectionId: string;
  /** The one event type to show; null for every event type a feed of all of them shows. */
  upstreamEventId: string | null;
  /** Read the inferred bookings too (for a view that shows busy time). */
  withBookings: boolean;
}

export interface ConnectionContent<W extends ContentWindow> {
  connection: FeedConnectionState;
  window: W;
  /** Current versions of the event types shown (enabled; a secret one only when named), by upstream id. */
  eventTypes: Map<string, FeedEventType>;
  /** Open slots of those event types in the window, by start then event type. */
  slots: FeedSlot[];
  /** Inferred bookings that closed slots of those event types, starting in the window (when asked for). */
  bookings: FeedBooking[];
}

export interface TeamMemberContent {
  id: string;
  displayName: string | null;
  /** Every current event type of the member, by upstream id. */
  eventTypes: Map<string, FeedEventType>;
  /** Every open slot of the member in the window, by start then event type. */
  slots: FeedSlot[];
}

export interface TeamContent {
  team: FeedTeamState;
  /** Every member, in the team's fixed order. */
  members: TeamMemberContent[];
}

export interface FeedContentStore {
  /**
   * A connection's content; `windowIn` chooses the window from the account's zone, read in the same
   * transaction. Throws ConnectionNotFoundError.
   */
  forConnection<W extends ContentWindow>(
    query: ConnectionContentQuery,
    windowIn: (zone: string | null) => W,
  ): Promise<ConnectionContent<W>>;
  /** A team's content in the window. Throws TeamNotFoundError. */
  forTeam(teamId: string, window: ContentWindow): Promise<TeamContent>;
  /** The account's zone (null when unknown). Throws ConnectionNotFoundError. */
  accountZone(connectionId: string): Promise<string | null>;
  /** When what the connection's feeds show last changed, and when it was made; undefined for no connection. */
  changeTimes(connectionId: string): Promise<{ feedChangedAt: Date | null; createdAt: Date } | undefined>;
  /** The connection's current event types, as a feed may name them: disabled and secret ones too. */
  currentEventTypes(
    connectionId: string,
  ): Promise<{ id: string; title: string; enabled: boolean; secret: boolean }[]>;
}

/** The columns a feed reads of an event type. */
const EVENT_TYPE_COLUMNS = {
  upstreamEventId: true,
  title: true,
  durationMinutes: true,
  url: true,
  color: true,
  enabled: true,
  secret: true,
} as const satisfies Prisma.EventTypeSelect;

/** The columns a feed reads of a slot. */
const SLOT_COLUMNS = {
  upstreamEventId: true,
  startsAt: true,
  endsAt: true,
  sequence: true,
  firstSeenAt: true,
  lastChangedAt: true,
} as const satisfies Prisma.SlotSelect;

type EventTypeRow = Prisma.EventTypeGetPayload<{ select: typeof EVENT_TYPE_COLUMNS }>;
type SlotRow = Prisma.SlotGetPayload<{ select: typeof SLOT_COLUMNS }>;

const eventTypesById = (rows: readonly EventTypeRow[]): Map<string, FeedEventType> =>
  new Map(rows.map(({ upstreamEventId, ...eventType }) => [upstreamEventId, eventType]));

const feedSlotOf = ({ upstreamEventId, ...slot }: SlotRow): FeedSlot => ({
  eventId: upstreamEventId,
  ...slot,
});

const SNAPSHOT = { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead };

export function createFeedContentStore(prisma: PrismaClient): FeedContentStore {
  return {
    forConnection(query, windowIn) {
      const { connectionId, upstreamEventId } = query;
      return prisma.$transaction(async (tx) => {
        const connection = await tx.connection.findUnique({
          where: { id: connectionId },
          select: FEED_CONNECTION_SELECT,
        });
        if (!connection) throw new ConnectionNotFoundError(connectionId);
        const window = windowIn(connection.timezone);
        const eventTypeRows = await tx.eventType.findMany({
          where: {
            connectionId: connection.id,
            validTo: null,
            ...(upstreamEventId !== null ? { upstreamEventId } : {}),
          },
          orderBy: [{ upstreamEventId: 'asc' }, { id: 'asc' }],
          select: EVENT_TYPE_COLUMNS,
        });
        const current = eventTypesById(eventTypeRows);
        const included = includedEventIds(current, upstreamEventId);
        const eventTypes = new Map([...current].filter(([id]) => included.has(id)));
        const inWindow = { gte: window.windowStart, lt: window.windowEnd };
        const slotRows =
          included.size === 0
            ? []
            : await tx.slot.findMany({
                where: {
                  connectionId: connection.id,
                  goneAt: null,
                  upstreamEventId: { in: [...included] },
                  startsAt: inWindow,
                },
                orderBy: [{ startsAt: 'asc' }, { upstreamEventId: 'asc' }, { id: 'asc' }],
                select: SLOT_COLUMNS,
              });
        const bookings =
          included.size === 0 || !query.withBookings
            ? []
            : await tx.booking.findMany({
                where: {
                  connectionId: connection.id,
                  eventIds: { hasSome: [...included] },
                  startsAt: inWindow,
                },
                orderBy: [{ startsAt: 'asc' }, { id: 'asc' }],
                select: { startsAt: true, endsAt: true, detectedAt: true },
              });
        return { connection, window, eventTypes, slots: slotRows.map(feedSlotOf), bookings };
      }, SNAPSHOT);
    },

    forTeam(teamId, window) {
      return prisma.$transaction(async (tx) => {
        const row = await tx.team.findUnique({ where: { id: teamId }, select: FEED_TEAM_SELECT });
        if (!row) throw new TeamNotFoundError(teamId);
        const team = teamStateOf(row);
        const memberIds = team.members.map((m) => m.id);
        // One after the other: an interactive transaction runs its queries on one connection anyway.
        const eventTypeRows =
          memberIds.length === 0
            ? []
            : await tx.eventType.findMany({
                where: { connectionId: { in: memberIds }, validTo: null },
                orderBy: [{ upstreamEventId: 'asc' }, { id: 'asc' }],
                select: { connectionId: true, ...EVENT_TYPE_COLUMNS },
              });
        const slotRows =
          memberIds.length === 0
            ? []
            : await tx.slot.findMany({
                where: {
                  connectionId: { in: memberIds },
                  goneAt: null,
                  startsAt: { gte: window.windowStart, lt: window.windowEnd },
                },
                orderBy: [{ startsAt: 'asc' }, { upstreamEventId: 'asc' }, { id: 'asc' }],
                select: { connectionId: true, ...SLOT_COLUMNS },
              });
        const members = team.members.map((member): TeamMemberContent => ({
          id: member.id,
          displayName: member.displayName,
          eventTypes: eventTypesById(eventTypeRows.filter((row) => row.connectionId === member.id)),
          slots: slotRows
            .filter((slot) => slot.connectionId === member.id)
            .map(({ connectionId: _owner, ...slot }) => feedSlotOf(slot)),
        }));
        return { team, members };
      }, SNAPSHOT);
    },

    async accountZone(connectionId) {
      const account = await prisma.connection.findUnique({
        where: { id: connectionId },
        select: { timezone: true },
      });
      if (!account) throw new ConnectionNotFoundError(connectionId);
      return account.timezone;
    },

    async changeTimes(connectionId) {
      const row = await prisma.connection.findUnique({
        where: { id: connectionId },
        select: { feedChangedAt: true, createdAt: true },
      });
      return row ?? undefined;
    },

    currentEventTypes: (connectionId) => currentEventTypes(prisma, connectionId),
  };
}
