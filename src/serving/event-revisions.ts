// SEQUENCE, DTSTAMP and LAST-MODIFIED of every published event. A VEVENT changes when anything a subscriber
// sees of it changes: its times, summary, description, link or colour. Some of those live in no row of their
// own (a free block's end moves when a neighbouring slot is booked; its description when an event type is
// renamed), so revisions are kept per rendered event: each feed remembers, per UID, a digest of what it last
// published, with the SEQUENCE and change time it went out with (store/event-revisions.ts, which decides and
// stores them in one statement). A render whose digest differs publishes SEQUENCE + 1 and the content's change
// time; an unchanged event keeps its revision, so two renders of unchanged data are byte-identical, on any replica.
//
// The change time is the feed's Last-Modified for the content read (not the clock of the request that
// noticed): every replica rendering the same content computes the same revision, and a render of older
// content never overwrites a newer revision (the store refuses an earlier change time).
import { feedEventDigest } from '../feeds/feed-events.js';
import type { EventRevision, FeedEvent } from '../feeds/feed-model.js';
import type { EventRevisionStore } from '../store/event-revisions.js';

export interface EventRevisions {
  /** The revision each event goes out with, storing those that are new or changed. */
  revisionsFor(
    feedId: string,
    events: readonly FeedEvent[],
    at: { contentChangedAt: Date; windowStart: Date },
  ): Promise<Map<string, EventRevision>>;
}

const revisionOf = ({ sequence, changedAt }: EventRevision): EventRevision => ({ sequence, changedAt });

export function createEventRevisions(store: EventRevisionStore): EventRevisions {
  return {
    async revisionsFor(feedId, events, at) {
      const revisions = await store.publish(
        feedId,
        events.map((event) => ({
          uid: event.uid,
          digest: feedEventDigest(event),
          history: event.history,
          endsAt: event.endsAt,
        })),
        at,
      );
      // A concurrent render (another replica, or newer content) wrote first: take what it stored.
      const lost = events.map((event) => event.uid).filter((uid) => !revisions.has(uid));
      for (const [uid, revision] of await store.published(feedId, lost))
        revisions.set(uid, revisionOf(revision));
      return revisions;
    },
  };
}
