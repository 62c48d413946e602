// SEQUENCE, DTSTAMP and LAST-MODIFIED of every published event. A VEVENT changes when anything a subscriber
// sees of it changes: its times, summary, description, link or colour. Some of those live in no row of their
// own (a free block's end moves when a neighbouring slot is booked; its description when an event type is
// renamed), so revisions are kept per rendered event: each feed remembers, per UID, a digest of what it last
// published, with the SEQUENCE and change time it went out with. A render whose digest differs publishes
// SEQUENCE + 1 and the content's change time; an unchanged event keeps its revision, so two renders of
// unchanged data are byte-identical, on any replica.
//
// The change time is the feed's Last-Modified for the content read (not the clock of the request that
// noticed): every replica rendering the same content computes the same revision, and a render of older
// content never overwrites a newer revision (the upsert refuses an earlier change time).
import type { PrismaClient } from '../generated/prisma/client.js';
import { feedEventDigest } from '../feeds/feed-events.js';
import type { EventRevision, FeedEvent } from '../feeds/feed-model.js';

export interface EventRevisionStore {
  /** The revision each event goes out with, storing those that are new or changed. */
  revisionsFor(
    feedId: string,
    events: readonly FeedEvent[],
    at: { contentChangedAt: Date; windowStart: Date },
  ): Promise<Map<string, EventRevision>>;
}

interface StoredRevision extends EventRevision {
  digest: string;
}

export function createEventRevisionStore(prisma: PrismaClient): EventRevisionStore {
  async function stored(feedId: string, uids: string[]): Promise<Map<string, StoredRevision>> {
    if (uids.length === 0) return new Map();
    const rows = await prisma.feedEvent.findMany({
      where: { feedId, uid: { in: uids } },
      select: { uid: true, digest: true, sequence: true, changedAt: true },
    });
    return new Map(
      rows.map((row) => [row.uid, { digest: row.digest, sequence: row.sequence, changedAt: row.changedAt }]),
    );
  }

  const revisionOf = ({ sequence, changedAt }: EventRevision): EventRevision => ({ sequence, changedAt });

  return {
    async revisionsFor(feedId, events, { contentChangedAt, windowStart }) {
      const known = await stored(
        feedId,
        events.map((event) => event.uid),
      );
      const revisions = new Map<string, EventRevision>();
      const writes: { event: FeedEvent; digest: string; revision: EventRevision }[] = [];
      for (const event of events) {
        const digest = feedEventDigest(event);
        const previous = known.get(event.uid);
        // Unchanged, or this render read content older than what was last published: keep what went out.
        if (previous && (previous.digest === digest || contentChangedAt < previous.changedAt)) {
          revisions.set(event.uid, revisionOf(previous));
          continue;
        }
        // New to this feed: it carries on from its slots' history (a feed that showed the slot before these
        // revisions were kept published exactly that). Changed: one more than anything published before.
        const revision = previous
          ? { sequence: Math.max(previous.sequence + 1, event.history.sequence), changedAt: contentChangedAt }
          : revisionOf(event.history);
        writes.push({ event, digest, revision });
      }
      if (writes.length === 0) return revisions;

      const written = await prisma.$queryRaw<{ uid: string; sequence: number; changed_at: Date }[]>`
        INSERT INTO feed_event (feed_id, uid, digest, sequence, changed_at, ends_at)
        SELECT ${feedId}::uuid, w.uid, w.digest, w.sequence, w.changed_at, w.ends_at
        FROM unnest(${writes.map((w) => w.event.uid)}::text[],
                    ${writes.map((w) => w.digest)}::text[],
                    ${writes.map((w) => w.revision.sequence)}::int[],
                    ${writes.map((w) => w.revision.changedAt)}::timestamptz[],
                    ${writes.map((w) => w.event.endsAt)}::timestamptz[])
             AS w(uid, digest, sequence, changed_at, ends_at)
        ON CONFLICT (feed_id, uid) DO UPDATE
          SET digest = EXCLUDED.digest,
              sequence = GREATEST(feed_event.sequence + 1, EXCLUDED.sequence),
              changed_at = EXCLUDED.changed_at,
              ends_at = EXCLUDED.ends_at
          WHERE feed_event.digest <> EXCLUDED.digest AND EXCLUDED.changed_at >= feed_event.changed_at
        RETURNING uid, sequence, changed_at`;
      for (const row of written)
        revisions.set(row.uid, { sequence: row.sequence, changedAt: row.changed_at });

      // A concurrent render (another replica, or newer content) wrote first: take what it stored.
      const lost = writes.map((w) => w.event.uid).filter((uid) => !revisions.has(uid));
      for (const [uid, revision] of await stored(feedId, lost)) revisions.set(uid, revisionOf(revision));

      // Events that ended before the window can never be shown again.
      await prisma.feedEvent.deleteMany({ where: { feedId, endsAt: { lt: windowStart } } });
      return revisions;
    },
  };
}
