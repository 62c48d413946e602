// Connections as operators see them (the admin pages, and the CLI's `connections`, `feeds` and `sync` commands):
// an overview with sync health, open slots, feeds and event types, and the two status writes operators make
// (disable, enable). createConnectionAdminStore (at the end) is how they reach it; the functions below also
// serve the feed content and report stores.
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { FeedRecord, FeedStore } from './feeds.js';
import { ConnectionNotFoundError } from './connections.js';

export const ADMIN_CONNECTION_LIMIT = 500;

export interface ConnectionOverview {
  id: string;
  email: string | null;
  displayName: string | null;
  timezone: string | null;
  status: 'active' | 'needs_reauth' | 'disabled';
  createdAt: Date;
  lastSyncAt: Date | null;
  /** Never 'superseded' or 'interrupted': such runs leave the connection as the last finished run left it. */
  lastSyncOutcome: 'succeeded' | 'failed' | 'superseded' | 'interrupted' | null;
  lastSyncError: string | null;
  lastGoodSyncAt: Date | null;
  nextSyncAt: Date;
  openSlots: number;
  feeds: FeedRecord[];
  eventTypes: { id: string; title: string; enabled: boolean }[];
}

export const CONNECTION_STATUSES = ['active', 'needs_reauth', 'disabled'] as const;
export type ConnectionStatusName = (typeof CONNECTION_STATUSES)[number];

/** The admin list's filter: text in the e-mail, display name or id, and a status. */
export interface ConnectionFilter {
  text?: string;
  status?: ConnectionStatusName;
}

function connectionWhere(filter: ConnectionFilter): Prisma.ConnectionWhereInput {
  const text = filter.text?.trim() ?? '';
  return {
    ...(filter.status === undefined ? {} : { status: filter.status }),
    ...(text === ''
      ? {}
      : {
          OR: [
            { email: { contains: text, mode: 'insensitive' } },
            { displayName: { contains: text, mode: 'insensitive' } },
            ...(UUID.test(text) ? [{ id: text }] : []),
          ],
        }),
  };
}

async function listConnectionOverviews(
  prisma: PrismaClient,
  feeds: FeedStore,
  limit = ADMIN_CONNECTION_LIMIT,
  filter: ConnectionFilter = {},
): Promise<{ connections: ConnectionOverview[]; total: number }> {
  const where = connectionWhere(filter);
  const [rows, total, activeFeeds] = await Promise.all([
    prisma.connection.findMany({
      where,
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit,
      select: {
        id: true,
        email: true,
        displayName: true,
        timezone: true,
        status: true,
        createdAt: true,
        lastSyncAt: true,
        lastSyncOutcome: true,
        lastSyncError: true,
        lastGoodSyncAt: true,
        nextSyncAt: true,
        _count: { select: { slots: { where: { goneAt: null } } } },
      },
    }),
    prisma.connection.count({ where }),
    feeds.list({}),
  ]);
  const ids = rows.map((row) => row.id);
  const eventTypes = await prisma.eventType.findMany({
    where: { connectionId: { in: ids }, validTo: null },
    orderBy: [{ title: 'asc' }, { upstreamEventId: 'asc' }],
    select: { connectionId: true, upstreamEventId: true, title: true, enabled: true },
  });
  return {
    total,
    connections: rows.map(({ _count, ...row }) => ({
      ...row,
      openSlots: _count.slots,
      feeds: activeFeeds.filter((feed) => feed.connectionId === row.id),
      eventTypes: eventTypes
        .filter((e) => e.connectionId === row.id)
        .map((e) => ({ id: e.upstreamEventId, title: e.title, enabled: e.enabled })),
    })),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The connection, or ConnectionNotFoundError (also for an id that is not a uuid, which Prisma would reject). */
export async function requireConnection(
  prisma: PrismaClient,
  id: string,
): Promise<{ id: string; status: string }> {
  const row = UUID.test(id)
    ? await prisma.connection.findUnique({ where: { id }, select: { id: true, status: true } })
    : null;
  if (!row) throw new ConnectionNotFoundError(id);
  return row;
}

/** A connection named by its id or its exact e-mail address, as an operator has one or the other at hand. */
async function connectionByIdOrEmail(
  prisma: PrismaClient,
  ref: string,
): Promise<{ id: string; displayName: string | null }> {
  const select = { id: true, displayName: true } as const;
  const trimmed = ref.trim();
  if (UUID.test(trimmed)) {
    const row = await prisma.connection.findUnique({ where: { id: trimmed }, select });
    if (row) return row;
    throw new ConnectionNotFoundError(trimmed);
  }
  const rows = await prisma.connection.findMany({
    where: { email: { equals: trimmed, mode: 'insensitive' } },
    select,
    take: 2,
  });
  if (rows.length === 1) return rows[0]!;
  throw new ConnectionNotFoundError(
    trimmed,
    rows.length === 0
      ? `no connection has the id or e-mail address "${trimmed}"`
      : `several connections have the e-mail address "${trimmed}": name one by its id`,
  );
}

/**
 * disabled: no more syncs (the scheduler selects active connections only); its feeds keep serving the last
 * snapshot until they are revoked, and say in their description that they are no longer updated. Enabling
 * makes it due at once. Either moves the feed version, with this clock (the description changed).
 */
async function setConnectionEnabled(
  prisma: PrismaClient,
  id: string,
  enabled: boolean,
  now: Date,
): Promise<boolean> {
  const updated = await prisma.connection.updateMany({
    where: { id, status: enabled ? 'disabled' : { in: ['active', 'needs_reauth'] } },
    data: {
      status: enabled ? 'active' : 'disabled',
      feedVersion: { increment: 1 },
      feedChangedAt: now,
      ...(enabled ? { nextSyncAt: now } : {}),
    },
  });
  return updated.count > 0;
}

/** The current title of one of the connection's event types, or undefined when it has no such event type. */
export async function currentEventTitle(
  prisma: PrismaClient,
  connectionId: string,
  upstreamEventId: string,
): Promise<string | undefined> {
  const row = await prisma.eventType.findFirst({
    where: { connectionId, upstreamEventId, validTo: null },
    select: { title: true },
  });
  return row?.title;
}

/** The connection's current event types, as a feed may name them (`--event`); disabled and secret ones too. */
export async function currentEventTypes(
  prisma: PrismaClient,
  connectionId: string,
): Promise<{ id: string; title: string; enabled: boolean; secret: boolean }[]> {
  const rows = await prisma.eventType.findMany({
    where: { connectionId, validTo: null },
    orderBy: [{ title: 'asc' }, { upstreamEventId: 'asc' }],
    select: { upstreamEventId: true, title: true, enabled: true, secret: true },
  });
  return rows.map((row) => ({
    id: row.upstreamEventId,
    title: row.title,
    enabled: row.enabled,
    secret: row.secret,
  }));
}

/** Ids of the connections the scheduler syncs (`slotfeed sync --all`). */
async function listActiveConnectionIds(prisma: PrismaClient): Promise<string[]> {
  const rows = await prisma.connection.findMany({ where: { status: 'active' }, select: { id: true } });
  return rows.map((row) => row.id);
}

/** A connection as an operator's page names it: its e-mail address, else its display name, else its id. */
export interface ConnectionContact {
  id: string;
  displayName: string | null;
  email: string | null;
}

/** The operator's connections (admin pages, `slotfeed connections | feeds | sync`), over one pool. */
export interface ConnectionAdminStore {
  /** The list, ordered by when they connected; `total` counts every match, beyond `limit` too. */
  overviews(
    filter?: ConnectionFilter,
    limit?: number,
  ): Promise<{ connections: ConnectionOverview[]; total: number }>;
  /** ConnectionNotFoundError for an unknown id, or one that is not a uuid. */
  require(id: string): Promise<{ id: string; status: string }>;
  /** By id or exact e-mail address (ConnectionNotFoundError when none, or several, match). */
  byIdOrEmail(ref: string): Promise<{ id: string; displayName: string | null }>;
  /** Disables or enables (see setConnectionEnabled); false when it already was. */
  setEnabled(id: string, enabled: boolean, now: Date): Promise<boolean>;
  currentEventTitle(connectionId: string, upstreamEventId: string): Promise<string | undefined>;
  currentEventTypes(
    connectionId: string,
  ): Promise<{ id: string; title: string; enabled: boolean; secret: boolean }[]>;
  /** Ids of the active connections: those the scheduler syncs. */
  activeIds(): Promise<string[]>;
  /** How many connections are in each status, every status named (0 when none): the state gauges'. */
  countsByStatus(): Promise<Record<ConnectionStatusName, number>>;
  /** Who these connections are, for the pages that name them; unknown ids are left out. */
  contacts(ids: readonly string[]): Promise<ConnectionContact[]>;
}

export function createConnectionAdminStore(prisma: PrismaClient, feeds: FeedStore): ConnectionAdminStore {
  return {
    overviews: (filter = {}, limit = ADMIN_CONNECTION_LIMIT) =>
      listConnectionOverviews(prisma, feeds, limit, filter),
    require: (id) => requireConnection(prisma, id),
    byIdOrEmail: (ref) => connectionByIdOrEmail(prisma, ref),
    setEnabled: (id, enabled, now) => setConnectionEnabled(prisma, id, enabled, now),
    currentEventTitle: (connectionId, upstreamEventId) =>
      currentEventTitle(prisma, connectionId, upstreamEventId),
    currentEventTypes: (connectionId) => currentEventTypes(prisma, connectionId),
    activeIds: () => listActiveConnectionIds(prisma),
    async countsByStatus() {
      const rows = await prisma.connection.groupBy({ by: ['status'], _count: { _all: true } });
      const countOf = (status: ConnectionStatusName) =>
        rows.find((r) => r.status === status)?._count._all ?? 0;
      return Object.fromEntries(CONNECTION_STATUSES.map((status) => [status, countOf(status)])) as Record<
        ConnectionStatusName,
        number
      >;
    },
    contacts: (ids) =>
      prisma.connection.findMany({
        where: { id: { in: [...ids] } },
        select: { id: true, displayName: true, email: true },
      }),
  };
}
