// What a push reads and writes of its destination (destinations/push-destination.ts): the events slotfeed wrote
// there (uid, href, etag, digest of what was written), which is all a push compares the feed with; one read that
// opens a push; a record per write that also answers the destination's state, so a push stops once it is paused or
// removed; and its end, succeeded (with its log entries, in one statement) or failed.
import { randomUUID } from 'node:crypto';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type { DestinationLogEntry } from './caldav-destination-log.js';
import {
  CaldavDestinationNotFoundError,
  DESTINATION_ID,
  destinationRecord,
  RECORD_FIELDS,
  sealingContext,
  type CaldavCredentials,
  type CaldavDestinationRecord,
  type CaldavDestinationState,
} from './caldav-destination-records.js';
import { RESOLVED_FEED_JSON, type ResolvedFeedJson } from './feed-row-json.js';
import type { TokenVault } from './token-vault.js';
import { destinationNeedsCredentials } from './webhook-events.js';
import { sqlThroughPrisma } from './pooled-transaction.js';
import { recordOwnerWebhookEvents } from './webhook-outbox.js';
import { pooledRows } from './pooled-rows.js';

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

/** The states a destination is pushed to in. */
const PUSHED_STATES: readonly StateAtWrite[] = ['active', 'failing'];

export const keepsPushing = (state: StateAtWrite): boolean => PUSHED_STATES.includes(state);

/** The same states in SQL, for a statement that decides by them (writtenAndSucceeded). */
const pushedStatesSql = Prisma.join(
  PUSHED_STATES.map((state) => Prisma.sql`${state}::caldav_destination_state`),
);

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
  /** Its feed with its connection's state, read in the same statement (FeedStore.resolveFrom); null: gone. */
  feed: ResolvedFeedJson | null;
  claim: PushClaim;
  credentials: CaldavCredentials;
  written: Map<string, WrittenEvent>;
  /** The calendar has a cleanup of an ended destination under way: nothing is written there until it ends. */
  awaitsCleanup: boolean;
}

export interface CaldavPushRecords {
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
   * credentials, the events written there and its feed. Throws CaldavDestinationNotFoundError.
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
  /**
   * A push of one write ends: the write's record (as recordWritten) and the push's end (as pushSucceeded), in one
   * statement, the end only while the destination is still pushed to. Says the destination's state as the write
   * was recorded, as recordWritten does: a push paused or removed meanwhile ends as one stopped by its record.
   */
  writtenAndSucceeded(
    destinationId: string,
    event: Omit<WrittenEvent, 'clash'>,
    end: {
      claim: PushClaim;
      now: Date;
      reconciled: boolean;
      logEntries?: readonly Omit<DestinationLogEntry, 'at'>[];
    },
  ): Promise<StateAtWrite>;
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
}

/** The log's entries as one JSON value, a millisecond apart from `now` so they read in the array's order. */
function logEntriesJson(logEntries: readonly Omit<DestinationLogEntry, 'at'>[], now: Date): string {
  return JSON.stringify(
    logEntries.map((entry, i) => ({
      id: randomUUID(),
      at: new Date(now.getTime() + i).toISOString(),
      kind: entry.kind,
      uid: entry.uid,
      message: entry.message,
    })),
  );
}

/** Inserts the entries (logEntriesJson) into the destination's log, while `onlyIf` holds. */
const logInsert = (destinationId: string, entries: string, onlyIf: Prisma.Sql) => Prisma.sql`
  INSERT INTO "caldav_destination_log" ("id", "destination_id", "at", "kind", "uid", "message")
  SELECT e."id", ${destinationId}::uuid, e."at", e."kind", e."uid", e."message"
  FROM jsonb_to_recordset(${entries}::jsonb)
       AS e("id" uuid, "at" timestamptz, "kind" text, "uid" text, "message" text)
  WHERE ${onlyIf}`;

/**
 * A push's end on its destination's row: what it carried comes off the pending count (a change a trigger counts
 * during the push is never lost: what stays pending was committed after the push read the feed, so its lag is
 * counted from then at the earliest), failures and backoff clear, a failing destination is active again.
 */
const pushEndedSet = (claim: PushClaim, now: Date, reconciled: boolean) => Prisma.sql`
  "pending_since" = CASE WHEN "pending_changes" - ${claim.pendingChanges}::int > 0
                         THEN GREATEST(COALESCE("pending_since", ${claim.readAt}), ${claim.readAt})
                    END,
  "pending_changes" = GREATEST("pending_changes" - ${claim.pendingChanges}::int, 0),
  "state" = CASE WHEN "state" = 'failing' THEN 'active'::caldav_destination_state ELSE "state" END,
  "last_push_at" = ${now},
  "last_error" = CASE WHEN "state" IN (${pushedStatesSql}) THEN NULL ELSE "last_error" END,
  "retry_at" = NULL,
  "consecutive_failures" = 0,
  "last_reconciled_at" = CASE WHEN ${reconciled} THEN ${now} ELSE "last_reconciled_at" END,
  "reconcile_requested_at" = CASE
    WHEN ${reconciled} AND "reconcile_requested_at" <= ${claim.readAt} THEN NULL
    ELSE "reconcile_requested_at"
  END`;

export function createCaldavPushRecords(prisma: PrismaClient, vault: TokenVault): CaldavPushRecords {
  const get = (destinationId: string) => destinationRecord(prisma, destinationId);
  /** CTEs `d` (the destination's row, share-locked) and `written` (the write's record, while the row exists). */
  const writtenUnderShareLock = (destinationId: string, event: Omit<WrittenEvent, 'clash'>) => Prisma.sql`
    d AS (SELECT "id", "state" FROM "caldav_destination" WHERE "id" = ${destinationId}::uuid FOR SHARE),
    written AS (
      INSERT INTO "caldav_event" ("destination_id", "uid", "href", "etag", "digest", "written_at", "clash")
      SELECT d."id", ${event.uid}, ${event.href}, ${event.etag}, ${event.digest}, ${event.writtenAt}, false
      FROM d
      ON CONFLICT ("destination_id", "uid") DO UPDATE
      SET "href" = EXCLUDED."href", "etag" = EXCLUDED."etag", "digest" = EXCLUDED."digest",
          "written_at" = EXCLUDED."written_at", "clash" = false
      RETURNING 1
    )`;
  /**
   * A write recorded after its destination was removed: the cleanup the removal left (committed before the
   * record's statement began, or it would have waited for the row) takes the event, so it is deleted with the others.
   */
  const intoCleanup = async (destinationId: string, event: Omit<WrittenEvent, 'clash'>): Promise<'gone'> => {
    await prisma.$executeRaw`
      UPDATE "caldav_cleanup"
      SET "events" = "events" || jsonb_build_array(jsonb_build_object(
        'uid', ${event.uid}::text, 'href', ${event.href}::text, 'etag', ${event.etag}::text))
      WHERE "id" = ${destinationId}::uuid`;
    return 'gone';
  };
  return {
    async writtenEvents(destinationId) {
      if (!DESTINATION_ID.test(destinationId)) return new Map();
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
        WITH ${writtenUnderShareLock(destinationId, event)}
        SELECT (SELECT "state"::text FROM d) AS "state", (SELECT count(*) FROM written) AS "written"`;
      return row?.state ?? (await intoCleanup(destinationId, event));
    },

    async writtenAndSucceeded(destinationId, event, { claim, now, reconciled, logEntries = [] }) {
      // As recordWritten, and the push's end (as pushSucceeded) in the same statement while the destination is
      // still pushed to: paused or removed, the push stops as its record says, with nothing more recorded.
      const pushing = Prisma.sql`EXISTS (SELECT 1 FROM d WHERE d."state" IN (${pushedStatesSql}))`;
      const [row] = await pooledRows<{ state: CaldavDestinationState | null }>(
        prisma,
        Prisma.sql`
        WITH ${writtenUnderShareLock(destinationId, event)},
        logged AS (${logInsert(destinationId, logEntriesJson(logEntries, now), pushing)}),
        ended AS (
          UPDATE "caldav_destination" SET ${pushEndedSet(claim, now, reconciled)}
          WHERE "id" = ${destinationId}::uuid AND ${pushing}
          RETURNING 1
        )
        SELECT (SELECT "state"::text FROM d) AS "state", (SELECT count(*) FROM written) AS "written",
               (SELECT count(*) FROM ended) AS "ended"`,
      );
      return row?.state ?? (await intoCleanup(destinationId, event));
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
      if (!DESTINATION_ID.test(destinationId)) throw new CaldavDestinationNotFoundError(destinationId);
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
      if (!DESTINATION_ID.test(destinationId)) throw new CaldavDestinationNotFoundError(destinationId);
      const [row] = await pooledRows<
        CaldavDestinationRecord & {
          passwordSealed: string;
          written: unknown;
          awaitsCleanup: boolean;
          feed: ResolvedFeedJson | null;
        }
      >(
        prisma,
        Prisma.sql`
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
                         FROM "caldav_event" e WHERE e."destination_id" = d."id"), '[]'::json) AS "written",
               EXISTS (SELECT 1 FROM "caldav_cleanup" c WHERE c."calendar_url" = d."calendar_url")
                 AS "awaitsCleanup",
               (SELECT ${RESOLVED_FEED_JSON} FROM "feed" f WHERE f."id" = d."feed_id") AS "feed"
        FROM "caldav_destination" d WHERE d."id" = ${destinationId}::uuid`,
      );
      if (!row) throw new CaldavDestinationNotFoundError(destinationId);
      const { passwordSealed, written, awaitsCleanup, feed, ...destination } = row;
      const events = (written as (Omit<WrittenEvent, 'writtenAt'> & { writtenAt: string })[]).map((e) => ({
        ...e,
        writtenAt: new Date(e.writtenAt),
      }));
      return {
        destination,
        feed,
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
        awaitsCleanup,
      };
    },

    async pushSucceeded(destinationId, claim, now, reconciled, logEntries = []) {
      // One statement, so a change a trigger counts during the push is never lost (pushEndedSet); the log's
      // entries go in with it.
      const exists = Prisma.sql`EXISTS (SELECT 1 FROM "caldav_destination" WHERE "id" = ${destinationId}::uuid)`;
      await prisma.$executeRaw`
        WITH logged AS (${logInsert(destinationId, logEntriesJson(logEntries, now), exists)})
        UPDATE "caldav_destination" SET ${pushEndedSet(claim, now, reconciled)}
        WHERE "id" = ${destinationId}::uuid`;
    },

    async pushFailed(destinationId, failure, now) {
      if (!DESTINATION_ID.test(destinationId)) throw new CaldavDestinationNotFoundError(destinationId);
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
          await recordOwnerWebhookEvents(sqlThroughPrisma(tx), owner, [event], now);
        }
        return updated;
      });
    },
  };
}
