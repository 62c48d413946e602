// What feeds and the JSON API read of the snapshots: a connection's declared state, its current event types,
// and its open slots and inferred bookings in a window; a team's declared state and each member's event types
// and slots. Each read of content is one REPEATABLE READ transaction: a sync committing between two of the
// reads would otherwise pair slots of version n+1 with feedVersion n, and the web layer would cache (and serve
// under one strong ETag) bytes that another replica renders differently.
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import type { FeedConnectionState, FeedTeamState } from '../feeds/feed-inputs.js';
import { usableSlotEnd } from '../feeds/feed-events.js';
import {
  includedEventIds,
  type FeedBooking,
  type FeedEventType,
  type FeedSlot,
} from '../feeds/feed-model.js';
import { currentEventTypes } from './connection-admin.js';
import { readConnectionContentRows } from './connection-content-statement.js';
import { ConnectionNotFoundError } from './connections.js';
import { FEED_CONNECTION_SELECT, FEED_TEAM_SELECT, teamStateOf } from './feed-inputs.js';
import { slotsAround, type SlotRunEdges } from './slot-runs.js';
import { TeamNotFoundError } from './teams.js';

/** The instants content is read between: slots and bookings starting in [windowStart, windowEnd). */
export interface ContentWindow {
  windowStart: Date;
  windowEnd: Date;
  /** For a view listing each free block whole under its start: read the runs crossing the edges (slot-runs.ts). */
  edges?: SlotRunEdges;
}

export interface ConnectionContentQuery {
  connectionId: string;
  /** The one event type to show; null for every event type a feed of all of them shows. */
  upstreamEventId: string | null;
  /** Read the inferred bookings too (for a view that shows busy time). */
  withBookings: boolean;
  /**
   * The account's zone as the caller last read it (its token lookup's or push's read of the connection): with
   * it, and a window without edges, the content is one statement (connection-content-statement.ts), read the
   * long way only when the zone moved meanwhile.
   */
  expectedZone?: string | null;
}

export interface ConnectionContent<W extends ContentWindow> {
  connection: FeedConnectionState;
  window: W;
  /** Current versions of the event types shown (enabled; a secret one only when named), by upstream id. */
  eventTypes: Map<string, FeedEventType>;
  /** Open slots of those event types in the window, by start then event type. */
  slots: FeedSlot[];
  /** With `edges`: open slots of those event types outside the window joining runs across its edges. */
  slotsAround: FeedSlot[];
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
  /** With `edges`: the member's open slots outside the window joining runs across its edges. */
  slotsAround: FeedSlot[];
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

/** A slot's end as free blocks count it, by its event type (looked up by `key`); its own end when unknown. */
function slotEndIn<S extends SlotRow>(
  eventTypes: ReadonlyMap<string, FeedEventType>,
  key: (slot: S) => string,
) {
  return (slot: S): number => {
    const eventType = eventTypes.get(key(slot));
    return (eventType ? usableSlotEnd(feedSlotOf(slot), eventType) : slot.endsAt)?.getTime() ?? 0;
  };
}

const SNAPSHOT = { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead };

/** The content as one statement read it, with the window chosen from the zone it found; undefined if it moved. */
async function connectionContentInOneStatement<W extends ContentWindow>(
  prisma: PrismaClient,
  query: ConnectionContentQuery & { expectedZone: string | null },
  window: W,
): Promise<ConnectionContent<W> | undefined> {
  const rows = await readConnectionContentRows(prisma, query, window);
  if (!rows) throw new ConnectionNotFoundError(query.connectionId);
  if (rows.connection.timezone !== query.expectedZone) return undefined;
  const current = new Map(
    rows.eventTypes.map(({ upstreamEventId, ...eventType }) => [upstreamEventId, eventType]),
  );
  const included = includedEventIds(current, query.upstreamEventId);
  return {
    connection: rows.connection,
    window,
    eventTypes: new Map([...current].filter(([id]) => included.has(id))),
    slots: rows.slots.filter((slot) => included.has(slot.eventId)),
    slotsAround: [],
    bookings: rows.bookings
      .filter((booking) => booking.eventIds.some((id) => included.has(id)))
      .map(({ eventIds: _closed, ...booking }) => booking),
  };
}

export function createFeedContentStore(prisma: PrismaClient): FeedContentStore {
  return {
    async forConnection(query, windowIn) {
      const { connectionId, upstreamEventId, expectedZone } = query;
      if (expectedZone !== undefined) {
        const window = windowIn(expectedZone);
        const read =
          window.edges === undefined
            ? await connectionContentInOneStatement(prisma, { ...query, expectedZone }, window)
            : undefined;
        if (read) return read;
      }
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
        const readSlots = (startsAt: Prisma.DateTimeFilter, also: Prisma.SlotWhereInput = {}) =>
          tx.slot.findMany({
            where: {
              connectionId: connection.id,
              goneAt: null,
              upstreamEventId: { in: [...included] },
              startsAt,
              ...also,
            },
            orderBy: [{ startsAt: 'asc' }, { upstreamEventId: 'asc' }, { id: 'asc' }],
            select: SLOT_COLUMNS,
          });
        const slotRows = included.size === 0 ? [] : await readSlots(inWindow);
        const around =
          included.size === 0 || window.edges === undefined
            ? { before: [], after: [] }
            : await slotsAround(
                readSlots,
                { ...window, edges: window.edges },
                slotRows,
                slotEndIn(eventTypes, (slot) => slot.upstreamEventId),
              );
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
        return {
          connection,
          window,
          eventTypes,
          slots: slotRows.map(feedSlotOf),
          slotsAround: [...around.before, ...around.after].map(feedSlotOf),
          bookings,
        };
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
        const readSlots = (startsAt: Prisma.DateTimeFilter, also: Prisma.SlotWhereInput = {}) =>
          tx.slot.findMany({
            where: { connectionId: { in: memberIds }, goneAt: null, startsAt, ...also },
            orderBy: [{ startsAt: 'asc' }, { upstreamEventId: 'asc' }, { id: 'asc' }],
            select: { connectionId: true, ...SLOT_COLUMNS },
          });
        const slotRows =
          memberIds.length === 0 ? [] : await readSlots({ gte: window.windowStart, lt: window.windowEnd });
        // Every member's runs together: a superset of each member's, which is all a team's blocks need.
        const around =
          memberIds.length === 0 || window.edges === undefined
            ? { before: [], after: [] }
            : await slotsAround(
                readSlots,
                { ...window, edges: window.edges },
                slotRows,
                slotEndIn(
                  new Map(
                    eventTypeRows.map(({ connectionId, upstreamEventId, ...eventType }) => [
                      `${connectionId}|${upstreamEventId}`,
                      eventType,
                    ]),
                  ),
                  (slot) => `${slot.connectionId}|${slot.upstreamEventId}`,
                ),
              );
        const slotsOf = (rows: typeof slotRows, memberId: string) =>
          rows
            .filter((slot) => slot.connectionId === memberId)
            .map(({ connectionId: _owner, ...slot }) => feedSlotOf(slot));
        const members = team.members.map((member): TeamMemberContent => ({
          id: member.id,
          displayName: member.displayName,
          eventTypes: eventTypesById(eventTypeRows.filter((row) => row.connectionId === member.id)),
          slots: slotsOf(slotRows, member.id),
          slotsAround: slotsOf([...around.before, ...around.after], member.id),
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
