// What each feed last published per event UID: the digest of what subscribers saw, and the SEQUENCE and change
// time it went out with (serving/event-revisions.ts decides what a render publishes). The write is guarded in
// SQL, since replicas render the same feed at once: a stored revision moves only for another digest, and never
// to an earlier change time (a render of older content never overwrites a newer revision).
import type { PrismaClient } from '../generated/prisma/client.js';
import type { EventRevision } from '../feeds/feed-model.js';

export interface PublishedRevision extends EventRevision {
  digest: string;
}

export interface RevisionWrite extends PublishedRevision {
  uid: string;
  /** When the event ends: its row is forgotten once the feed's window has passed it. */
  endsAt: Date;
}

export interface EventRevisionStore {
  /** What the feed last published under each of these UIDs (those it never published are absent). */
  published(feedId: string, uids: readonly string[]): Promise<Map<string, PublishedRevision>>;
  /**
   * Stores each revision, as new, or over a stored one with another digest and a change time no later; for an
   * existing row the sequence is at least one more than the stored one. Returns what was stored, by UID: a UID
   * is absent when a concurrent render stored the same digest or newer content first. In the same statement, the
   * feed's other events that ended before `windowStart` are forgotten: they can never be shown again.
   */
  record(
    feedId: string,
    writes: readonly RevisionWrite[],
    windowStart: Date,
  ): Promise<Map<string, EventRevision>>;
}

export function createEventRevisionStore(prisma: PrismaClient): EventRevisionStore {
  return {
    async published(feedId, uids) {
      if (uids.length === 0) return new Map();
      const rows = await prisma.feedEvent.findMany({
        where: { feedId, uid: { in: [...uids] } },
        select: { uid: true, digest: true, sequence: true, changedAt: true },
      });
      return new Map(
        rows.map((row) => [
          row.uid,
          { digest: row.digest, sequence: row.sequence, changedAt: row.changedAt },
        ]),
      );
    },

    async record(feedId, writes, windowStart) {
      if (writes.length === 0) return new Map();
      const uids = writes.map((w) => w.uid);
      // The rows written are left out of the forgetting: a statement must not change one row twice.
      const written = await prisma.$queryRaw<{ uid: string; sequence: number; changed_at: Date }[]>`
        WITH forgotten AS (
          DELETE FROM feed_event
          WHERE feed_id = ${feedId}::uuid AND ends_at < ${windowStart} AND uid <> ALL(${uids}::text[])
        )
        INSERT INTO feed_event (feed_id, uid, digest, sequence, changed_at, ends_at)
        SELECT ${feedId}::uuid, w.uid, w.digest, w.sequence, w.changed_at, w.ends_at
        FROM unnest(${uids}::text[],
                    ${writes.map((w) => w.digest)}::text[],
                    ${writes.map((w) => w.sequence)}::int[],
                    ${writes.map((w) => w.changedAt)}::timestamptz[],
                    ${writes.map((w) => w.endsAt)}::timestamptz[])
             AS w(uid, digest, sequence, changed_at, ends_at)
        ON CONFLICT (feed_id, uid) DO UPDATE
          SET digest = EXCLUDED.digest,
              sequence = GREATEST(feed_event.sequence + 1, EXCLUDED.sequence),
              changed_at = EXCLUDED.changed_at,
              ends_at = EXCLUDED.ends_at
          WHERE feed_event.digest <> EXCLUDED.digest AND EXCLUDED.changed_at >= feed_event.changed_at
        RETURNING uid, sequence, changed_at`;
      return new Map(written.map((row) => [row.uid, { sequence: row.sequence, changedAt: row.changed_at }]));
    },
  };
}
