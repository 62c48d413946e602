// CalDAV destinations (issue 29): a feed written into a person's own CalDAV calendar. A destination belongs to
// one feed; its password is kept sealed by the token vault, bound to the destination's id, and opened only for
// a push (credentialsOf). Beside it: the events slotfeed wrote there (uid, href, etag, digest of what was
// written), which is all a push compares the feed with, and a log of what happened to it.
//
// What is left to push is counted in Postgres: the triggers of the caldav_destinations migration move
// pending_changes (and pending_since, the oldest change's commit) whenever what the feed shows changes,
// whoever writes it; a push that went through takes off what it carried. The dispatcher asks `due` which
// destinations to hand to the queue.
import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import type { FeedConnectionState, FeedTeamState } from '../feeds/feed-inputs.js';
import { ConnectionNotFoundError } from './connections.js';
import { FEED_CONNECTION_SELECT, FEED_TEAM_SELECT, teamStateOf } from './feed-inputs.js';
import { FeedNotFoundError } from './feeds.js';
import { TeamNotFoundError } from './teams.js';
import type { TokenVault } from './token-vault.js';
import { destinationNeedsCredentials } from './webhook-events.js';
import { recordOwnerWebhookEvents } from './webhook-outbox.js';

export const CALDAV_DESTINATION_STATES = ['active', 'needs_credentials', 'failing', 'paused'] as const;
export type CaldavDestinationState = (typeof CALDAV_DESTINATION_STATES)[number];

/** A destination as callers see it: everything but the password. */
export interface CaldavDestinationRecord {
  id: string;
  feedId: string;
  /** The server's address as given. */
  serverUrl: string;
  /** The calendar found or made on the server, where the events are written. */
  calendarUrl: string;
  username: string;
  calendarName: string;
  state: CaldavDestinationState;
  lastPushAt: Date | null;
  /** What went wrong last, without secrets; null after a push that went through. */
  lastError: string | null;
  /** Changes to what the feed shows that no push has carried yet. */
  pendingChanges: number;
  /** When the oldest of them was committed. */
  pendingSince: Date | null;
  /** No push before this (backoff, or the server's Retry-After); null: any time. */
  retryAt: Date | null;
  consecutiveFailures: number;
  lastReconciledAt: Date | null;
  reconcileRequestedAt: Date | null;
  createdAt: Date;
}

export interface CaldavCredentials {
  username: string;
  password: string;
}

/** An event slotfeed wrote into a destination. */
export interface WrittenEvent {
  uid: string;
  href: string;
  /** null when the server's answer named none. */
  etag: string | null;
  /** Of the bytes written (destinations/event-objects.ts). */
  digest: string;
  writtenAt: Date;
  /** The calendar holds someone else's event with this UID: slotfeed left it alone and writes none there. */
  clash: boolean;
}

/**
 * A destination's state as a write is recorded, or 'gone' once it was removed (the write then went into its
 * cleanup): a push carries on only while it is active or failing.
 */
export type StateAtWrite = CaldavDestinationState | 'gone';

export const keepsPushing = (state: StateAtWrite): boolean => state === 'active' || state === 'failing';

export interface DestinationLogEntry {
  at: Date;
  /** push, repair-created, repair-restored, repair-deleted, conflict, failure, credentials … */
  kind: string;
  uid: string | null;
  message: string;
}

/** What a push carried, to be taken off the pending count when it went through. */
export interface PushClaim {
  /** pending_changes when the push read the feed. */
  pendingChanges: number;
  /** pending_since then. */
  pendingSince: Date | null;
  /** When the push read the feed: changes still pending afterwards were committed after it. */
  readAt: Date;
}

export interface OpenedPush {
  destination: CaldavDestinationRecord;
  claim: PushClaim;
  credentials: CaldavCredentials;
  written: Map<string, WrittenEvent>;
}

export interface CaldavDestinationStore {
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
   * asked for, or none since `reconcileBefore`. Oldest change first.
   */
  due(now: Date, reconcileBefore: Date, limit: number): Promise<string[]>;
  /** What the destination holds of slotfeed's, by UID (and the UIDs it left to someone else's events). */
  writtenEvents(destinationId: string): Promise<Map<string, WrittenEvent>>;
  /**
   * Records a write as the server answered it, and says the destination's state now, in one statement: a push
   * stops before its next write once it is paused or removed. Removed meanwhile, the write is added to the
   * destination's cleanup, so the event is deleted with the rest.
   */
  recordWritten(destinationId: string, event: Omit<WrittenEvent, 'clash'>): Promise<StateAtWrite>;
  /** The UID is someone else's event's in the calendar: never written, changed or deleted there. */
  recordClash(destinationId: string, uid: string, now: Date): Promise<StateAtWrite>;
  forgetWritten(destinationId: string, uid: string): Promise<StateAtWrite>;
  /**
   * The calendar is gone from the server (deleted there): the record of its events goes with it, and the
   * destination is paused with `message` until a person resumes (the calendar is made again) or removes it.
   */
  calendarGone(destinationId: string, message: string, now: Date): Promise<void>;
  /** Read before a push reads the feed: what it will carry. Throws CaldavDestinationNotFoundError. */
  claim(destinationId: string, now: Date): Promise<PushClaim>;
  /**
   * All a push reads of its destination, in one round trip: the record, what it carries (its claim), the opened
   * credentials and the events written there. Throws CaldavDestinationNotFoundError.
   */
  openPush(destinationId: string, now: Date): Promise<OpenedPush>;
  /**
   * The push went through: what it carried comes off the pending count, the failure count and backoff clear,
   * a failing destination is active again (paused and needs_credentials stay). `reconciled`: it was a
   * reconciliation, which also answers one asked for before it began.
   */
  pushSucceeded(
    destinationId: string,
    claim: PushClaim,
    now: Date,
    reconciled: boolean,
    /** Written to the log in the same statement. */
    logEntries?: readonly Omit<DestinationLogEntry, 'at'>[],
  ): Promise<void>;
  /** Drops these destinations' log entries beyond their newest LOG_KEPT, in one statement (a worker's chore). */
  trimLogs(destinationIds: readonly string[]): Promise<number>;
  /**
   * The push failed: the state it leaves (failing, or needs_credentials: no retries until credentials are
   * replaced), why, and when to try again. A paused destination stays paused. Moving into needs_credentials
   * writes a destination.needs_credentials webhook event for the feed's owner, in the same transaction.
   */
  pushFailed(
    destinationId: string,
    failure: { state: 'failing' | 'needs_credentials'; error: string; retryAt: Date | null },
    now: Date,
  ): Promise<CaldavDestinationRecord>;
  /** Appends to the destination's log (trimLogs drops the oldest beyond LOG_KEPT). */
  log(destinationId: string, entries: readonly Omit<DestinationLogEntry, 'at'>[], now: Date): Promise<void>;
  /** The latest entries, newest first. */
  logOf(destinationId: string, limit?: number): Promise<DestinationLogEntry[]>;
  /** The state a feed's events are read with: its connection's, or its team's and members'. */
  feedOwnerState(feed: {
    connectionId: string | null;
    teamId: string | null;
  }): Promise<
    { kind: 'connection'; connection: FeedConnectionState } | { kind: 'team'; team: FeedTeamState }
  >;
}

export class CaldavDestinationNotFoundError extends Error {
  constructor(readonly destinationId: string) {
    super(`no CalDAV destination with id ${destinationId}`);
    this.name = 'CaldavDestinationNotFoundError';
  }
}

export class CalendarTakenError extends Error {
  constructor(readonly calendarUrl: string) {
    super(
      `the calendar ${calendarUrl} is written by another slotfeed destination already; choose another calendar`,
    );
    this.name = 'CalendarTakenError';
  }
}

/** Log entries kept per destination. */
export const LOG_KEPT = 500;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The associated data a destination's password is sealed with: a sealed copy moved to another row fails. */
const sealingContext = (destinationId: string) => `caldav-destination:${destinationId}`;

const RECORD_FIELDS = {
  id: true,
  feedId: true,
  serverUrl: true,
  calendarUrl: true,
  username: true,
  calendarName: true,
  state: true,
  lastPushAt: true,
  lastError: true,
  pendingChanges: true,
  pendingSince: true,
  retryAt: true,
  consecutiveFailures: true,
  lastReconciledAt: true,
  reconcileRequestedAt: true,
  createdAt: true,
} as const satisfies Prisma.CaldavDestinationSelect;

const isKnown = (error: unknown, code: string) =>
  error instanceof Prisma.PrismaClientKnownRequestError && error.code === code;

export function createCaldavDestinationStore(
  prisma: PrismaClient,
  vault: TokenVault,
): CaldavDestinationStore {
  async function get(destinationId: string): Promise<CaldavDestinationRecord> {
    const row = UUID.test(destinationId)
      ? await prisma.caldavDestination.findUnique({ where: { id: destinationId }, select: RECORD_FIELDS })
      : null;
    if (!row) throw new CaldavDestinationNotFoundError(destinationId);
    return row;
  }

  /** An update of one destination's row; a row gone (removed meanwhile) is CaldavDestinationNotFoundError. */
  async function update(
    destinationId: string,
    data: Prisma.CaldavDestinationUpdateInput,
  ): Promise<CaldavDestinationRecord> {
    if (!UUID.test(destinationId)) throw new CaldavDestinationNotFoundError(destinationId);
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

  return {
    async create(input, now) {
      if (!UUID.test(input.feedId)) throw new FeedNotFoundError(input.feedId);
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
        if (id !== undefined && !UUID.test(id)) return [];
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
      if (!UUID.test(destinationId)) throw new CaldavDestinationNotFoundError(destinationId);
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
      const row = UUID.test(destinationId)
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
      const rows = await prisma.caldavDestination.findMany({
        where: {
          state: { in: ['active', 'failing'] },
          OR: [{ retryAt: null }, { retryAt: { lte: now } }],
          AND: [
            {
              OR: [
                { pendingChanges: { gt: 0 } },
                { reconcileRequestedAt: { not: null } },
                { lastReconciledAt: null },
                { lastReconciledAt: { lt: reconcileBefore } },
              ],
            },
          ],
        },
        orderBy: [{ pendingSince: { sort: 'asc', nulls: 'last' } }, { id: 'asc' }],
        select: { id: true },
        take: limit,
      });
      return rows.map((row) => row.id);
    },

    async writtenEvents(destinationId) {
      if (!UUID.test(destinationId)) return new Map();
      const rows = await prisma.caldavEvent.findMany({
        where: { destinationId },
        select: { uid: true, href: true, etag: true, digest: true, writtenAt: true, clash: true },
      });
      return new Map(rows.map((row) => [row.uid, row]));
    },

    async recordWritten(destinationId, event) {
      // The destination's row is share-locked while the write is recorded: a removal waits for it (and then
      // finds it in the record), or has committed before it (then the write goes into the cleanup, below).
      const [row] = await prisma.$queryRaw<{ state: CaldavDestinationState | null }[]>`
        WITH d AS (SELECT "id", "state" FROM "caldav_destination" WHERE "id" = ${destinationId}::uuid FOR SHARE),
        written AS (
          INSERT INTO "caldav_event" ("destination_id", "uid", "href", "etag", "digest", "written_at", "clash")
          SELECT d."id", ${event.uid}, ${event.href}, ${event.etag}, ${event.digest}, ${event.writtenAt}, false
          FROM d
          ON CONFLICT ("destination_id", "uid") DO UPDATE
          SET "href" = EXCLUDED."href", "etag" = EXCLUDED."etag", "digest" = EXCLUDED."digest",
              "written_at" = EXCLUDED."written_at", "clash" = false
          RETURNING 1
        )
        SELECT (SELECT "state"::text FROM d) AS "state", (SELECT count(*) FROM written) AS "written"`;
      if (row?.state != null) return row.state;
      // Removed: the cleanup it left (committed before this statement began, or it would have waited above)
      // takes the event, so it is deleted with the others.
      await prisma.$executeRaw`
        UPDATE "caldav_cleanup"
        SET "events" = "events" || jsonb_build_array(jsonb_build_object(
          'uid', ${event.uid}::text, 'href', ${event.href}::text, 'etag', ${event.etag}::text))
        WHERE "id" = ${destinationId}::uuid`;
      return 'gone';
    },

    async recordClash(destinationId, uid, now) {
      const [row] = await prisma.$queryRaw<{ state: CaldavDestinationState | null }[]>`
        WITH d AS (SELECT "id", "state" FROM "caldav_destination" WHERE "id" = ${destinationId}::uuid FOR SHARE),
        marked AS (
          INSERT INTO "caldav_event" ("destination_id", "uid", "href", "etag", "digest", "written_at", "clash")
          SELECT d."id", ${uid}, '', NULL, '', ${now}, true FROM d
          ON CONFLICT ("destination_id", "uid") DO UPDATE SET "clash" = true, "etag" = NULL, "href" = ''
          RETURNING 1
        )
        SELECT (SELECT "state"::text FROM d) AS "state", (SELECT count(*) FROM marked) AS "marked"`;
      return row?.state ?? 'gone';
    },

    async forgetWritten(destinationId, uid) {
      const [row] = await prisma.$queryRaw<{ state: CaldavDestinationState | null }[]>`
        WITH forgotten AS (
          DELETE FROM "caldav_event" WHERE "destination_id" = ${destinationId}::uuid AND "uid" = ${uid}
          RETURNING 1
        )
        SELECT (SELECT "state"::text FROM "caldav_destination" WHERE "id" = ${destinationId}::uuid) AS "state",
               (SELECT count(*) FROM forgotten) AS "forgotten"`;
      return row?.state ?? 'gone';
    },

    async calendarGone(destinationId, message, now) {
      if (!UUID.test(destinationId)) throw new CaldavDestinationNotFoundError(destinationId);
      await prisma.$transaction([
        prisma.caldavEvent.deleteMany({ where: { destinationId } }),
        prisma.caldavDestination.updateMany({
          where: { id: destinationId },
          data: { state: 'paused', lastError: message, lastPushAt: now, retryAt: null },
        }),
      ]);
    },

    async claim(destinationId, now) {
      const { pendingChanges, pendingSince } = await get(destinationId);
      return { pendingChanges, pendingSince, readAt: now };
    },

    async openPush(destinationId, now) {
      if (!UUID.test(destinationId)) throw new CaldavDestinationNotFoundError(destinationId);
      const [row] = await prisma.$queryRaw<
        (CaldavDestinationRecord & { passwordSealed: string; written: unknown })[]
      >`
        SELECT d."id"::text AS "id", d."feed_id"::text AS "feedId", d."server_url" AS "serverUrl",
               d."calendar_url" AS "calendarUrl", d."username", d."calendar_name" AS "calendarName",
               d."state"::text AS "state", d."last_push_at" AS "lastPushAt", d."last_error" AS "lastError",
               d."pending_changes" AS "pendingChanges", d."pending_since" AS "pendingSince",
               d."retry_at" AS "retryAt", d."consecutive_failures" AS "consecutiveFailures",
               d."last_reconciled_at" AS "lastReconciledAt",
               d."reconcile_requested_at" AS "reconcileRequestedAt", d."created_at" AS "createdAt",
               d."password_sealed" AS "passwordSealed",
               COALESCE((SELECT json_agg(json_build_object(
                          'uid', e."uid", 'href', e."href", 'etag', e."etag", 'digest', e."digest",
                          'writtenAt', e."written_at", 'clash', e."clash"))
                         FROM "caldav_event" e WHERE e."destination_id" = d."id"), '[]'::json) AS "written"
        FROM "caldav_destination" d WHERE d."id" = ${destinationId}::uuid`;
      if (!row) throw new CaldavDestinationNotFoundError(destinationId);
      const { passwordSealed, written, ...destination } = row;
      const events = (written as (Omit<WrittenEvent, 'writtenAt'> & { writtenAt: string })[]).map((e) => ({
        ...e,
        writtenAt: new Date(e.writtenAt),
      }));
      return {
        destination,
        claim: {
          pendingChanges: destination.pendingChanges,
          pendingSince: destination.pendingSince,
          readAt: now,
        },
        credentials: {
          username: destination.username,
          password: vault.open(passwordSealed, sealingContext(destinationId)),
        },
        written: new Map(events.map((event) => [event.uid, event])),
      };
    },

    async pushSucceeded(destinationId, claim, now, reconciled, logEntries = []) {
      // One statement, so a change a trigger counts during the push is never lost: what stays pending was
      // committed after the push read the feed, so its lag is counted from then at the earliest. The log's
      // entries go in with it (a millisecond apart, so they read in the array's order).
      const entries = JSON.stringify(
        logEntries.map((entry, i) => ({
          id: randomUUID(),
          at: new Date(now.getTime() + i).toISOString(),
          kind: entry.kind,
          uid: entry.uid,
          message: entry.message,
        })),
      );
      await prisma.$executeRaw`
        WITH logged AS (
          INSERT INTO "caldav_destination_log" ("id", "destination_id", "at", "kind", "uid", "message")
          SELECT e."id", ${destinationId}::uuid, e."at", e."kind", e."uid", e."message"
          FROM jsonb_to_recordset(${entries}::jsonb)
               AS e("id" uuid, "at" timestamptz, "kind" text, "uid" text, "message" text)
          WHERE EXISTS (SELECT 1 FROM "caldav_destination" WHERE "id" = ${destinationId}::uuid)
        )
        UPDATE "caldav_destination"
        SET "pending_since" = CASE WHEN "pending_changes" - ${claim.pendingChanges}::int > 0
                                   THEN GREATEST(COALESCE("pending_since", ${claim.readAt}), ${claim.readAt})
                              END,
            "pending_changes" = GREATEST("pending_changes" - ${claim.pendingChanges}::int, 0),
            "state" = CASE WHEN "state" = 'failing' THEN 'active'::caldav_destination_state ELSE "state" END,
            "last_push_at" = ${now},
            "last_error" = CASE WHEN "state" IN ('active', 'failing') THEN NULL ELSE "last_error" END,
            "retry_at" = NULL,
            "consecutive_failures" = 0,
            "last_reconciled_at" = CASE WHEN ${reconciled} THEN ${now} ELSE "last_reconciled_at" END,
            "reconcile_requested_at" = CASE
              WHEN ${reconciled} AND "reconcile_requested_at" <= ${claim.readAt} THEN NULL
              ELSE "reconcile_requested_at"
            END
        WHERE "id" = ${destinationId}::uuid`;
    },

    async trimLogs(destinationIds) {
      const ids = destinationIds.filter((id) => UUID.test(id));
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

    async pushFailed(destinationId, failure, now) {
      if (!UUID.test(destinationId)) throw new CaldavDestinationNotFoundError(destinationId);
      return prisma.$transaction(async (tx) => {
        // The row locked while its state is read and changed: of two refusals at once, one sees the other's.
        const [current] = await tx.$queryRaw<
          { state: CaldavDestinationState; connectionId: string | null; teamId: string | null }[]
        >`
          SELECT d."state"::text AS "state", f."connection_id"::text AS "connectionId",
                 f."team_id"::text AS "teamId"
          FROM "caldav_destination" d JOIN "feed" f ON f."id" = d."feed_id"
          WHERE d."id" = ${destinationId}::uuid
          FOR UPDATE OF d`;
        if (!current) throw new CaldavDestinationNotFoundError(destinationId);
        const state = current.state === 'paused' ? 'paused' : failure.state;
        const updated = await tx.caldavDestination.update({
          where: { id: destinationId },
          data: {
            state,
            lastError: failure.error,
            retryAt: failure.retryAt,
            consecutiveFailures: { increment: 1 },
            ...(failure.state === 'needs_credentials' ? { lastPushAt: now } : {}),
          },
          select: RECORD_FIELDS,
        });
        // Webhook endpoints hear it once, when the state changes, in the same transaction (the outbox, last).
        if (state === 'needs_credentials' && current.state !== 'needs_credentials') {
          const owner =
            current.connectionId !== null
              ? { connectionId: current.connectionId }
              : { teamId: current.teamId ?? '' };
          const event = destinationNeedsCredentials({
            destinationId,
            feedId: updated.feedId,
            connectionId: current.connectionId,
            reason: failure.error,
            at: now,
          });
          await recordOwnerWebhookEvents(tx, owner, [event], now);
        }
        return updated;
      });
    },

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
      if (!UUID.test(destinationId)) return [];
      return prisma.caldavDestinationLog.findMany({
        where: { destinationId },
        orderBy: [{ at: 'desc' }],
        take: limit,
        select: { at: true, kind: true, uid: true, message: true },
      });
    },

    async feedOwnerState(feed) {
      if (feed.connectionId !== null) {
        const connection = await prisma.connection.findUnique({
          where: { id: feed.connectionId },
          select: FEED_CONNECTION_SELECT,
        });
        if (!connection) throw new ConnectionNotFoundError(feed.connectionId);
        return { kind: 'connection', connection };
      }
      const teamId = feed.teamId ?? '';
      const team = await prisma.team.findUnique({ where: { id: teamId }, select: FEED_TEAM_SELECT });
      if (!team) throw new TeamNotFoundError(teamId);
      return { kind: 'team', team: teamStateOf(team) };
    },
  };
}
