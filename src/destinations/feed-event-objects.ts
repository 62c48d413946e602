// What a destination's feed shows now, as event resources: the feed resolved by id, or from what the push's opening
// statement read of it (its row and its owner's state, as a token lookup resolves it), published as the feed route
// publishes it (serving/feed-representation.ts: the same plan, revisions and cap), one resource per event. A
// revoked feed shows nothing.
//
// A change of one event makes that event's resource alone (issue 43): a feed's resources are kept with the events
// they were made from (each planned event and its revision: all its text depends on), and a new version of the feed
// takes the kept resource of every event that did not change. Rendering and cutting the whole feed again for each
// change cost ~28 µs an event, 4–8 ms a push for a feed of 150–300 events. An event's resource is its one-event
// calendar, rendered by the feed's own renderer and cut as the whole feed is, so it is the very event the .ics
// shows (test/destinations/feed-event-objects.test.ts holds the two to the byte).
import { LRUCache } from 'lru-cache';
import { renderCalendar, revisionOf } from '../feeds/render-feed.js';
import {
  madeOfPublication,
  type FeedPublication,
  type PublicationDeps,
} from '../serving/feed-representation.js';
import type { KeyedCache } from '../serving/render-cache.js';
import type { ResolvedFeedJson } from '../store/feed-row-json.js';
import type { FeedStore } from '../store/feeds.js';
import { eventObjects, type EventObject } from './event-objects.js';
import type { EventProofs } from './event-proofs.js';

/** A feed's resources as made for one version of it (`key`, the feed route's cache key), each by what it shows. */
interface KeptObjects {
  key: string;
  objects: EventObject[];
  byEvent: Map<string, EventObject>;
}

/** The resources kept per feed: the latest version made of each, within a bound of bytes. */
export type FeedObjectsCache = LRUCache<string, KeptObjects>;

export function createFeedObjectsCache(maxBytes: number): FeedObjectsCache {
  return new LRUCache<string, KeptObjects>({
    maxSize: maxBytes,
    maxEntrySize: maxBytes,
    // Each resource's text, counted twice (in the list and by event), and a little for the entry itself.
    sizeCalculation: (kept) =>
      256 + kept.objects.reduce((bytes, object) => bytes + 2 * object.icalendar.length, 0),
  });
}

export interface FeedEventObjectsDeps {
  feeds: Pick<FeedStore, 'resolve' | 'resolveFrom'>;
  /** As the web role's feed serving has them. */
  publication: PublicationDeps;
  proofs: Pick<EventProofs, 'sign'>;
  kept: FeedObjectsCache;
  /** Renders a publication's calendar: the feed's own renderer (a test counts the events it is given). */
  render?: typeof renderCalendar;
}

type PlannedEvent = FeedPublication['planned']['events'][number];

/** Everything an event's resource is made from, as one string: its planned fields and the revision it goes out with. */
const eventKey = (publication: FeedPublication, event: PlannedEvent) =>
  JSON.stringify([event, revisionOf(event, publication.revisions)]);

/** The publication's resources: the kept one of each event that did not change, the others made now. */
function objectsOf(
  deps: FeedEventObjectsDeps,
  feedId: string,
  publication: FeedPublication,
  previous: KeptObjects | undefined,
): Omit<KeptObjects, 'key'> {
  const render = deps.render ?? renderCalendar;
  const byEvent = new Map<string, EventObject>();
  const objects = publication.planned.events.map((event) => {
    const key = eventKey(publication, event);
    let object = previous?.byEvent.get(key) ?? byEvent.get(key);
    if (object === undefined) {
      const text = render(publication.head, { events: [event], total: 1 }, publication.revisions);
      [object] = eventObjects(text, feedId, deps.proofs);
      if (object === undefined) throw new Error(`event ${event.uid} rendered no VEVENT`);
    }
    byEvent.set(key, object);
    return object;
  });
  return { objects, byEvent };
}

/**
 * Throws FeedNotFoundError for a feed deleted meanwhile (its destinations go with it). `read`: the feed as a
 * statement of the caller's read it (the push's opening one), so it is not read again.
 */
export async function feedEventObjects(
  deps: FeedEventObjectsDeps,
  feedId: string,
  read?: ResolvedFeedJson | null,
): Promise<EventObject[]> {
  const resolved =
    read === undefined ? await deps.feeds.resolve(feedId) : await deps.feeds.resolveFrom(feedId, read);
  if (resolved.feed.revokedAt !== null) return [];
  const previous = deps.kept.get(feedId);
  // The feed's kept version while its key is still the feed's, else a new one made with what it can take over.
  const cache: KeyedCache<Omit<KeptObjects, 'key'>> = {
    get: (key) => (previous?.key === key ? previous : undefined),
    set: (key, made) => {
      deps.kept.set(feedId, { key, ...made });
    },
  };
  const made = await madeOfPublication(deps.publication, resolved, cache, (publication) =>
    objectsOf(deps, feedId, publication, previous),
  );
  return made.objects;
}
