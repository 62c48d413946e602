// What each feed last published per event UID: the digest of what subscribers saw, and the SEQUENCE and change
// time it went out with. A render's revisions are decided and stored in one statement (publish), the rule in SQL
// alone: an event new to the feed carries on from its slots' history; a changed one (another digest) goes out with
// one more than anything published before, at the content's change time; an unchanged one keeps what it went out
// with. The write is guarded, since replicas render the same feed at once: a stored revision moves only for
// another digest, and never to an earlier change time (a render of older content never overwrites a newer one).
// One statement, not a read and then a write: a feed's render, and so each CalDAV push of a changed feed, makes one
// round trip fewer (issue 43).
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { pooledRows } from './pooled-rows.js';
import type { EventRevision } from '../feeds/feed-model.js';

export interface PublishedRevision extends EventRevision {
  digest: string;
}

/** An event of a render, as its revision is decided: what it shows (digest) and what its slots' history says. */
export interface RevisionCandidate {
  uid: string;
  digest: string;
  history: EventRevision;
  /** When the event ends: its row is forgotten once the feed's window has passed it. */
  endsAt: Date;
}

export interface EventRevisionStore {
  /** What the feed last published under each of these UIDs (those it never published are absent). */
  published(feedId: string, uids: readonly string[]): Promise<Map<string, PublishedRevision>>;
  /**
   * The revision each event goes out with, decided and stored in one statement (the rule above). A UID is absent
   * when a concurrent render stored another revision of it first (read it with `published`). When anything is
   * stored, the feed's other events that ended before `windowStart` are forgotten: they can never be shown again.
   */
  publish(
    feedId: string,
    events: readonly RevisionCandidate[],
    at: { contentChangedAt: Date; windowStart: Date },
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

    async publish(feedId, events, { contentChangedAt, windowStart }) {
      if (events.length === 0) return new Map();
      const uids = events.map((e) => e.uid);
      // `stored` and the answer's kept rows read the table as the statement began; the rows written are left out
      // of the forgetting (a statement must not change one row twice).
      const rows = await pooledRows<{ uid: string; sequence: number; changed_at: Date }>(
        prisma,
        Prisma.sql`
        WITH rendered AS (
          SELECT * FROM unnest(${uids}::text[],
                               ${events.map((e) => e.digest)}::text[],
                               ${events.map((e) => e.history.sequence)}::int[],
                               ${events.map((e) => e.history.changedAt)}::timestamptz[],
                               ${events.map((e) => e.endsAt)}::timestamptz[])
            AS r(uid, digest, history_sequence, history_changed_at, ends_at)
        ), stored AS (
          SELECT uid, digest, sequence, changed_at FROM feed_event
          WHERE feed_id = ${feedId}::uuid AND uid = ANY(${uids}::text[])
        ), changed AS (
          -- New to the feed: from its slots' history. Changed since it was published, by content no older than
          -- what was: past both what was published and its history, at the content's change time.
          SELECT r.uid, r.digest, r.ends_at,
                 CASE WHEN s.uid IS NULL THEN r.history_sequence
                      ELSE GREATEST(s.sequence + 1, r.history_sequence) END AS sequence,
                 CASE WHEN s.uid IS NULL THEN r.history_changed_at
                      ELSE ${contentChangedAt}::timestamptz END AS changed_at
          FROM rendered r LEFT JOIN stored s ON s.uid = r.uid
          WHERE s.uid IS NULL OR (s.digest <> r.digest AND ${contentChangedAt}::timestamptz >= s.changed_at)
        ), forgotten AS (
          DELETE FROM feed_event
          WHERE feed_id = ${feedId}::uuid AND ends_at < ${windowStart}
            AND uid NOT IN (SELECT uid FROM changed) AND EXISTS (SELECT 1 FROM changed)
        ), written AS (
          INSERT INTO feed_event (feed_id, uid, digest, sequence, changed_at, ends_at)
          SELECT ${feedId}::uuid, uid, digest, sequence, changed_at, ends_at FROM changed
          ON CONFLICT (feed_id, uid) DO UPDATE
            SET digest = EXCLUDED.digest,
                sequence = GREATEST(feed_event.sequence + 1, EXCLUDED.sequence),
                changed_at = EXCLUDED.changed_at,
                ends_at = EXCLUDED.ends_at
            WHERE feed_event.digest <> EXCLUDED.digest AND EXCLUDED.changed_at >= feed_event.changed_at
          RETURNING uid, sequence, changed_at
        )
        SELECT uid, sequence, changed_at FROM written
        UNION ALL
        SELECT uid, sequence, changed_at FROM stored WHERE uid NOT IN (SELECT uid FROM changed)`,
      );
      return new Map(rows.map((row) => [row.uid, { sequence: row.sequence, changedAt: row.changed_at }]));
    },
  };
}
