// SEQUENCE, DTSTAMP and LAST-MODIFIED of every published event. A VEVENT changes when anything a subscriber
// sees of it changes: its times, summary, description, link or colour. Some of those live in no row of their
// own (a free block's end moves when a neighbouring slot is booked; its description when an event type is
// renamed), so revisions are kept per rendered event: each feed remembers, per UID, a digest of what it last
// published, with the SEQUENCE and change time it went out with (store/event-revisions.ts). A render whose
// digest differs publishes SEQUENCE + 1 and the content's change time; an unchanged event keeps its revision,
// so two renders of unchanged data are byte-identical, on any replica.
//
// The change time is the feed's Last-Modified for the content read (not the clock of the request that
// noticed): every replica rendering the same content computes the same revision, and a render of older
// content never overwrites a newer revision (the store refuses an earlier change time).
import { feedEventDigest } from '../feeds/feed-events.js';
import type { EventRevision, FeedEvent } from '../feeds/feed-model.js';
import type { EventRevisionStore, PublishedRevision, RevisionWrite } from '../store/event-revisions.js';

export interface EventRevisions {
  /** The revision each event goes out with, storing those that are new or changed. */
  revisionsFor(
    feedId: string,
    events: readonly FeedEvent[],
    at: { contentChangedAt: Date; windowStart: Date },
  ): Promise<Map<string, EventRevision>>;
}

const revisionOf = ({ sequence, changedAt }: EventRevision): EventRevision => ({ sequence, changedAt });

/**
 * Which events keep what they were published with, and which go out with a new revision (to be stored):
 * decided from what the feed published before and when the content read last changed.
 */
export function planRevisions(
  events: readonly FeedEvent[],
  published: ReadonlyMap<string, PublishedRevision>,
  contentChangedAt: Date,
): { kept: Map<string, EventRevision>; writes: RevisionWrite[] } {
  const kept = new Map<string, EventRevision>();
  const writes: RevisionWrite[] = [];
  for (const event of events) {
    const digest = feedEventDigest(event);
    const previous = published.get(event.uid);
    // Unchanged, or this render read content older than what was last published: keep what went out.
    if (previous && (previous.digest === digest || contentChangedAt < previous.changedAt)) {
      kept.set(event.uid, revisionOf(previous));
      continue;
    }
    // New to this feed: it carries on from its slots' history (a feed that showed the slot before these
    // revisions were kept published exactly that). Changed: one more than anything published before.
    const revision = previous
      ? { sequence: Math.max(previous.sequence + 1, event.history.sequence), changedAt: contentChangedAt }
      : revisionOf(event.history);
    writes.push({ uid: event.uid, digest, ...revision, endsAt: event.endsAt });
  }
  return { kept, writes };
}

export function createEventRevisions(store: EventRevisionStore): EventRevisions {
  return {
    async revisionsFor(feedId, events, { contentChangedAt, windowStart }) {
      const published = await store.published(
        feedId,
        events.map((event) => event.uid),
      );
      const { kept: revisions, writes } = planRevisions(events, published, contentChangedAt);
      if (writes.length === 0) return revisions;

      for (const [uid, revision] of await store.record(feedId, writes, windowStart))
        revisions.set(uid, revision);
      // A concurrent render (another replica, or newer content) wrote first: take what it stored.
      const lost = writes.map((w) => w.uid).filter((uid) => !revisions.has(uid));
      for (const [uid, revision] of await store.published(feedId, lost))
        revisions.set(uid, revisionOf(revision));
      return revisions;
    },
  };
}
