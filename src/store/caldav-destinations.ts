// CalDAV destinations (issue 29): a feed written into a person's own CalDAV calendar. A destination belongs to
// one feed; its password is kept sealed by the token vault, bound to the destination's id, and opened only for
// a push. This module keeps a destination's life (added, listed, paused, asked to push, given new credentials,
// ended) and composes the store with its two other parts: what a push reads and writes
// (caldav-push-records.ts) and the destination's log (caldav-destination-log.ts).
//
// What is left to push is counted in Postgres: the triggers of the caldav_destinations migration move
// pending_changes (and pending_since, the oldest change's commit) whenever what the feed shows changes,
// whoever writes it; a push that went through takes off what it carried. The dispatcher asks `due` which
// destinations to hand to the queue.
import { randomUUID } from 'node:crypto';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { createCaldavDestinationLog, type CaldavDestinationLog } from './caldav-destination-log.js';
import {
  CaldavDestinationNotFoundError,
  calendarHost,
  CalendarTakenError,
  DESTINATION_ID,
  destinationRecord,
  isKnown,
  RECORD_FIELDS,
  sealingContext,
  type CaldavCredentials,
  type CaldavDestinationRecord,
} from './caldav-destination-records.js';
import { createCaldavPushRecords, type CaldavPushRecords } from './caldav-push-records.js';
import { FeedNotFoundError } from './feeds.js';
import { pooledRows } from './pooled-rows.js';
import type { TokenVault } from './token-vault.js';

export * from './caldav-destination-records.js';
export * from './caldav-destination-log.js';
export * from './caldav-push-records.js';

/** A destination's life: added, read, listed, paused, asked to push or reconcile, given new credentials, ended. */
export interface CaldavDestinationLifecycle {
  /**
   * A destination of an active feed; pending from the start (its first push writes the whole feed). Throws
   * FeedNotFoundError (unknown or revoked feed), CalendarTakenError (the calendar has a destination already).
   */
  create(
    input: {
      feedId: string;
      serverUrl: string;
      calendarUrl: string;
      calendarName: string;
      credentials: CaldavCredentials;
    },
    now: Date,
  ): Promise<CaldavDestinationRecord>;
  /** Throws CaldavDestinationNotFoundError. */
  get(destinationId: string): Promise<CaldavDestinationRecord>;
  /** Oldest first; the destinations of one feed, or of every feed of one connection or team. */
  list(filter?: {
    feedId?: string;
    connectionId?: string;
    teamId?: string;
  }): Promise<CaldavDestinationRecord[]>;
  /**
   * Ends the destination: its row, record and log go, and (unless `keepEvents`) a cleanup is left with what it
   * wrote, which a worker deletes from the calendar (store/caldav-cleanups.ts). Whatever else deletes a
   * destination (its feed, connection or team deleted) leaves one too, by the migration's trigger. Throws
   * CaldavDestinationNotFoundError.
   */
  retire(destinationId: string, options: { keepEvents: boolean; reason: string; now: Date }): Promise<void>;
  /** The username and the opened password, for a push. Throws CaldavDestinationNotFoundError. */
  credentialsOf(destinationId: string): Promise<CaldavCredentials>;
  /**
   * New credentials: sealed, and the destination active again (out of needs_credentials and any backoff) with a
   * push and a reconciliation asked for. A paused destination stays paused. Throws CaldavDestinationNotFoundError.
   */
  replaceCredentials(
    destinationId: string,
    credentials: CaldavCredentials,
    now: Date,
  ): Promise<CaldavDestinationRecord>;
  /** Paused: nothing is pushed until resumed (resuming asks for a push). Throws CaldavDestinationNotFoundError. */
  setPaused(destinationId: string, paused: boolean, now: Date): Promise<CaldavDestinationRecord>;
  /** A push asked for now (push-now): one more pending change, out of any backoff. */
  requestPush(destinationId: string, now: Date): Promise<CaldavDestinationRecord>;
  /** A reconciliation asked for now (reconcile-now), out of any backoff. */
  requestReconcile(destinationId: string, now: Date): Promise<CaldavDestinationRecord>;
  /**
   * Destinations a push is due for: active or failing, out of backoff, with changes pending, a reconciliation
   * asked for, or none since `reconcileBefore`, and no cleanup under way in their calendar. Oldest change first,
   * each with its calendar's host.
   */
  due(now: Date, reconcileBefore: Date, limit: number): Promise<DuePush[]>;
}

/** A destination due for a push, and the host its push waits in line for (calendarHost). */
export interface DuePush {
  id: string;
  host: string;
}

export const duePush = (destination: Pick<CaldavDestinationRecord, 'id' | 'calendarUrl'>): DuePush => ({
  id: destination.id,
  host: calendarHost(destination.calendarUrl),
});

export type CaldavDestinationStore = CaldavDestinationLifecycle & CaldavPushRecords & CaldavDestinationLog;

export function createCaldavDestinationStore(
  prisma: PrismaClient,
  vault: TokenVault,
): CaldavDestinationStore {
  const get = (destinationId: string) => destinationRecord(prisma, destinationId);
  /** An update of one destination's row; a row gone (removed meanwhile) is CaldavDestinationNotFoundError. */
  async function update(
    destinationId: string,
    data: Prisma.CaldavDestinationUpdateInput,
  ): Promise<CaldavDestinationRecord> {
    if (!DESTINATION_ID.test(destinationId)) throw new CaldavDestinationNotFoundError(destinationId);
    try {
      return await prisma.caldavDestination.update({
        where: { id: destinationId },
        data,
        select: RECORD_FIELDS,
      });
    } catch (error: unknown) {
      if (isKnown(error, 'P2025')) throw new CaldavDestinationNotFoundError(destinationId);
      throw error;
    }
  }

  const lifecycle: CaldavDestinationLifecycle = {
    async create(input, now) {
      if (!DESTINATION_ID.test(input.feedId)) throw new FeedNotFoundError(input.feedId);
      const feed = await prisma.feed.findUnique({ where: { id: input.feedId }, select: { revokedAt: true } });
      if (!feed || feed.revokedAt !== null) throw new FeedNotFoundError(input.feedId);
      const id = randomUUID();
      try {
        return await prisma.caldavDestination.create({
          data: {
            id,
            feedId: input.feedId,
            serverUrl: input.serverUrl,
            calendarUrl: input.calendarUrl,
            calendarName: input.calendarName,
            username: input.credentials.username,
            passwordSealed: vault.seal(input.credentials.password, sealingContext(id)),
            // The whole feed is to be written: pending from the moment it was added.
            pendingChanges: 1,
            pendingSince: now,
            createdAt: now,
          },
          select: RECORD_FIELDS,
        });
      } catch (error: unknown) {
        if (isKnown(error, 'P2002')) throw new CalendarTakenError(input.calendarUrl);
        if (isKnown(error, 'P2003')) throw new FeedNotFoundError(input.feedId);
        throw error;
      }
    },

    get,

    async list(filter = {}) {
      for (const id of [filter.feedId, filter.connectionId, filter.teamId]) {
        if (id !== undefined && !DESTINATION_ID.test(id)) return [];
      }
      return prisma.caldavDestination.findMany({
        where: {
          ...(filter.feedId !== undefined ? { feedId: filter.feedId } : {}),
          ...(filter.connectionId !== undefined ? { feed: { connectionId: filter.connectionId } } : {}),
          ...(filter.teamId !== undefined ? { feed: { teamId: filter.teamId } } : {}),
        },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: RECORD_FIELDS,
      });
    },

    async retire(destinationId, { keepEvents, reason, now }) {
      if (!DESTINATION_ID.test(destinationId)) throw new CaldavDestinationNotFoundError(destinationId);
      const [, , , deleted] = await prisma.$transaction([
        // Read by the migration's trigger as the row goes: keep the events, or why they are deleted.
        prisma.$executeRaw`SELECT set_config('slotfeed.caldav_keep_events', ${keepEvents ? 'on' : 'off'}, true)`,
        prisma.$executeRaw`SELECT set_config('slotfeed.caldav_removal_reason', ${reason}, true)`,
        prisma.$executeRaw`SELECT set_config('slotfeed.caldav_removed_at', ${now.toISOString()}, true)`,
        prisma.caldavDestination.deleteMany({ where: { id: destinationId } }),
      ]);
      if (deleted.count === 0) throw new CaldavDestinationNotFoundError(destinationId);
    },

    async credentialsOf(destinationId) {
      const row = DESTINATION_ID.test(destinationId)
        ? await prisma.caldavDestination.findUnique({
            where: { id: destinationId },
            select: { username: true, passwordSealed: true },
          })
        : null;
      if (!row) throw new CaldavDestinationNotFoundError(destinationId);
      return {
        username: row.username,
        password: vault.open(row.passwordSealed, sealingContext(destinationId)),
      };
    },

    async replaceCredentials(destinationId, credentials, now) {
      const current = await get(destinationId);
      return update(destinationId, {
        username: credentials.username,
        passwordSealed: vault.seal(credentials.password, sealingContext(destinationId)),
        state: current.state === 'paused' ? 'paused' : 'active',
        lastError: null,
        retryAt: null,
        consecutiveFailures: 0,
        pendingChanges: { increment: 1 },
        pendingSince: current.pendingSince ?? now,
        reconcileRequestedAt: now,
      });
    },

    async setPaused(destinationId, paused, now) {
      const current = await get(destinationId);
      if (paused) return update(destinationId, { state: 'paused' });
      if (current.state !== 'paused') return current;
      return update(destinationId, {
        state: 'active',
        retryAt: null,
        consecutiveFailures: 0,
        pendingChanges: { increment: 1 },
        pendingSince: current.pendingSince ?? now,
      });
    },

    async requestPush(destinationId, now) {
      const current = await get(destinationId);
      return update(destinationId, {
        retryAt: null,
        pendingChanges: { increment: 1 },
        pendingSince: current.pendingSince ?? now,
      });
    },

    async requestReconcile(destinationId, now) {
      return update(destinationId, { retryAt: null, reconcileRequestedAt: now });
    },

    async due(now, reconcileBefore, limit) {
      // Asked after every commit that moved a feed (the dispatcher looks at once): one statement from the pool,
      // past Prisma (pooled-rows.ts), where it was two through it. A calendar with a cleanup under way waits for
      // it (pushDestination skips it): not dispatched meanwhile.
      const rows = await pooledRows<{ id: string; calendarUrl: string }>(
        prisma,
        Prisma.sql`
          SELECT d.id::text AS id, d.calendar_url AS "calendarUrl" FROM caldav_destination d
          WHERE d.state IN ('active', 'failing')
            AND NOT EXISTS (SELECT 1 FROM caldav_cleanup c WHERE c.calendar_url = d.calendar_url)
            AND (d.retry_at IS NULL OR d.retry_at <= ${now})
            AND (d.pending_changes > 0 OR d.reconcile_requested_at IS NOT NULL OR d.last_reconciled_at IS NULL
                 OR d.last_reconciled_at < ${reconcileBefore})
          ORDER BY d.pending_since ASC NULLS LAST, d.id ASC
          LIMIT ${limit}`,
      );
      return rows.map(duePush);
    },
  };
  return { ...lifecycle, ...createCaldavPushRecords(prisma, vault), ...createCaldavDestinationLog(prisma) };
}
