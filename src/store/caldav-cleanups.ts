// What ended CalDAV destinations left to delete from people's calendars (issue 34). A cleanup is written by the
// caldav_cleanups migration's trigger as a destination's row is deleted, whoever deletes it (a removal, or its
// feed, connection or team deleted by a page, the CLI, retention or psql): the server, the calendar, the sealed
// password (still bound to the destination's id, which the cleanup keeps), and the events slotfeed recorded
// writing there. A worker deletes those from the calendar and then the cleanup (destinations/clean-up.ts),
// retried with a backoff; refused credentials stop it until someone gives new ones or lets the events be.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type { CaldavCredentials } from './caldav-destinations.js';
import { pooledRows } from './pooled-rows.js';
import type { TokenVault } from './token-vault.js';

export type CaldavCleanupState = 'pending' | 'needs_credentials';

/** An event slotfeed wrote into the calendar, as the cleanup keeps it. */
export interface CleanupEvent {
  uid: string;
  href: string;
  etag: string | null;
}

export interface CaldavCleanupRecord {
  /** The ended destination's id. */
  id: string;
  feedId: string;
  ownerConnectionId: string | null;
  ownerTeamId: string | null;
  serverUrl: string;
  calendarUrl: string;
  calendarName: string;
  username: string;
  events: CleanupEvent[];
  /** Why the destination ended, as said to the person. */
  reason: string;
  state: CaldavCleanupState;
  attempts: number;
  retryAt: Date | null;
  lastError: string | null;
  createdAt: Date;
}

export interface CaldavCleanupStore {
  /** Oldest first; those of one connection's or team's feeds, or all. */
  list(filter?: { connectionId?: string; teamId?: string }): Promise<CaldavCleanupRecord[]>;
  /** null when done (or never there). */
  find(id: string): Promise<CaldavCleanupRecord | null>;
  /** Pending, out of backoff: oldest first. */
  due(now: Date, limit: number): Promise<string[]>;
  credentialsOf(id: string): Promise<CaldavCredentials>;
  /** The cleanup under way in that calendar, oldest first; null when none is. */
  atCalendar(calendarUrl: string): Promise<CaldavCleanupRecord | null>;
  /**
   * Every event deleted (or gone already), or a person lets them be: the cleanup ends, its sealed password with
   * it. A destination that writes into the same calendar now is asked to reconcile (at `now`): it waited for the
   * cleanup, or (added before it had to) may hold events the cleanup deleted.
   */
  done(id: string, now: Date): Promise<void>;
  /** Not done yet: what is left, why, and when to try again (null with needs_credentials: not before a person acts). */
  failed(
    id: string,
    outcome: { state: CaldavCleanupState; error: string; retryAt: Date | null; events?: CleanupEvent[] },
  ): Promise<void>;
  /** New credentials: pending again at once, its attempts counted from none. Returns false when it is gone. */
  replaceCredentials(id: string, credentials: CaldavCredentials): Promise<boolean>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** As store/caldav-destinations.ts seals it: the cleanup keeps the destination's id. */
const sealingContext = (destinationId: string) => `caldav-destination:${destinationId}`;

const FIELDS = {
  id: true,
  feedId: true,
  ownerConnectionId: true,
  ownerTeamId: true,
  serverUrl: true,
  calendarUrl: true,
  calendarName: true,
  username: true,
  events: true,
  reason: true,
  state: true,
  attempts: true,
  retryAt: true,
  lastError: true,
  createdAt: true,
} as const satisfies Prisma.CaldavCleanupSelect;

function eventsOf(value: Prisma.JsonValue): CleanupEvent[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item) => {
    const event = item as { uid?: unknown; href?: unknown; etag?: unknown } | null;
    if (typeof event?.uid !== 'string' || typeof event.href !== 'string') return [];
    return [{ uid: event.uid, href: event.href, etag: typeof event.etag === 'string' ? event.etag : null }];
  });
}

type Row = Prisma.CaldavCleanupGetPayload<{ select: typeof FIELDS }>;
const recordOf = (row: Row): CaldavCleanupRecord => ({ ...row, events: eventsOf(row.events) });

export function createCaldavCleanupStore(prisma: PrismaClient, vault: TokenVault): CaldavCleanupStore {
  return {
    async list(filter = {}) {
      for (const id of [filter.connectionId, filter.teamId]) {
        if (id !== undefined && !UUID.test(id)) return [];
      }
      const rows = await prisma.caldavCleanup.findMany({
        where: {
          ...(filter.connectionId !== undefined ? { ownerConnectionId: filter.connectionId } : {}),
          ...(filter.teamId !== undefined ? { ownerTeamId: filter.teamId } : {}),
        },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: FIELDS,
      });
      return rows.map(recordOf);
    },

    async find(id) {
      if (!UUID.test(id)) return null;
      const row = await prisma.caldavCleanup.findUnique({ where: { id }, select: FIELDS });
      return row ? recordOf(row) : null;
    },

    // Asked with the pushes due, after every commit that moved a feed: from the pool, past Prisma (pooled-rows.ts).
    async due(now, limit) {
      const rows = await pooledRows<{ id: string }>(
        prisma,
        Prisma.sql`
          SELECT id::text AS id FROM caldav_cleanup
          WHERE state = 'pending' AND (retry_at IS NULL OR retry_at <= ${now})
          ORDER BY created_at ASC, id ASC
          LIMIT ${limit}`,
      );
      return rows.map((row) => row.id);
    },

    async credentialsOf(id) {
      const row = await prisma.caldavCleanup.findUnique({
        where: { id },
        select: { username: true, passwordSealed: true },
      });
      if (!row) throw new Error(`no CalDAV cleanup ${id}`);
      return { username: row.username, password: vault.open(row.passwordSealed, sealingContext(id)) };
    },

    async atCalendar(calendarUrl) {
      const row = await prisma.caldavCleanup.findFirst({
        where: { calendarUrl },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: FIELDS,
      });
      return row ? recordOf(row) : null;
    },

    async done(id, now) {
      if (!UUID.test(id)) return;
      await prisma.$executeRaw`
        WITH ended AS (DELETE FROM "caldav_cleanup" WHERE "id" = ${id}::uuid RETURNING "calendar_url")
        UPDATE "caldav_destination"
        SET "reconcile_requested_at" = COALESCE("reconcile_requested_at", ${now})
        WHERE "calendar_url" IN (SELECT "calendar_url" FROM ended)`;
    },

    async failed(id, outcome) {
      await prisma.caldavCleanup.updateMany({
        where: { id },
        data: {
          state: outcome.state,
          lastError: outcome.error,
          retryAt: outcome.retryAt,
          attempts: { increment: 1 },
          ...(outcome.events !== undefined
            ? { events: outcome.events as unknown as Prisma.InputJsonValue }
            : {}),
        },
      });
    },

    async replaceCredentials(id, credentials) {
      if (!UUID.test(id)) return false;
      const { count } = await prisma.caldavCleanup.updateMany({
        where: { id },
        data: {
          username: credentials.username,
          passwordSealed: vault.seal(credentials.password, sealingContext(id)),
          state: 'pending',
          retryAt: null,
          lastError: null,
          // Its backoff starts again from the shortest: the failures it counted were the old credentials'.
          attempts: 0,
        },
      });
      return count > 0;
    },
  };
}
