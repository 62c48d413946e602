// What a destination's feed shows now, as event resources: the feed resolved by id, or from what the push's opening
// statement read of it (its row and its owner's state, as a token lookup resolves it), published as the feed route
// publishes it (serving/feed-representation.ts: the same plan, revisions and cap), one resource per event. A
// revoked feed shows nothing.
//
// A change of one event makes that event's resource alone (issue 43): a feed's resources are kept with what each
// was rendered from (render-feed.ts's eventData: the planned event and its revision), and a new version of the feed
// takes the kept resource of every event whose data did not change. Rendering and cutting the whole feed again for
// each change cost ~28 µs an event, 4–8 ms a push for a feed of 150–300 events. The events that did change are
// rendered together by the feed's own renderer and cut as the whole feed is: the cut is event by event, so each is
// the very event the .ics shows (test/destinations/feed-event-objects.test.ts and feed-event-resources.test.ts hold
// the two to the byte).
import { LRUCache } from 'lru-cache';
import type { FeedEvent } from '../feeds/feed-model.js';
import { eventData, revisionOf, type renderCalendar } from '../feeds/render-feed.js';
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

/** A feed's resources as made for one version of it (`key`, the feed route's cache key), each by its event's data. */
export interface KeptObjects {
  key: string;
  objects: EventObject[];
  byEvent: Map<string, EventObject>;
}

/** The resources kept per feed id: the latest version made of each. */
export interface FeedObjectsCache {
  get(feedId: string): KeptObjects | undefined;
  set(feedId: string, kept: KeptObjects): void;
  delete(feedId: string): void;
}

/** Bytes an event's resource holds: its text, its key, its uid and digest, and the objects around them. */
const keptBytes = (kept: KeptObjects) => {
  let bytes = 256;
  for (const [key, object] of kept.byEvent)
    bytes += key.length + object.icalendar.length + object.uid.length + object.digest.length + 150;
  return bytes;
};

/** Within `maxBytes`, a feed at most a quarter of them, so that one huge feed never pushes out all the others. */
export function createFeedObjectsCache(maxBytes: number): FeedObjectsCache {
  const cache = new LRUCache<string, KeptObjects>({
    maxSize: maxBytes,
    maxEntrySize: Math.max(1, Math.floor(maxBytes / 4)),
    sizeCalculation: keptBytes,
  });
  return {
    get: (feedId) => cache.get(feedId),
    set: (feedId, kept) => {
      cache.set(feedId, kept);
    },
    delete: (feedId) => {
      cache.delete(feedId);
    },
  };
}

export interface FeedEventObjectsDeps {
  feeds: Pick<FeedStore, 'resolve' | 'resolveFrom'>;
  /** As the web role's feed serving has them. */
  publication: PublicationDeps;
  proofs: Pick<EventProofs, 'sign'>;
  kept: FeedObjectsCache;
  /** The feed's own renderer (feeds/render-feed.ts). */
  render: typeof renderCalendar;
}

/** A value of an event's render data as a key's part: an instant by its milliseconds, a list as JSON. */
const keyPart = (value: unknown): string =>
  value instanceof Date
    ? String(value.getTime())
    : typeof value === 'object' && value !== null
      ? JSON.stringify(value)
      : String(value);

/**
 * All an event's resource is made from (its render data, render-feed.ts's eventData), as one string: each property
 * and its value. Joined by hand: JSON.stringify took 4.6 µs an event (its dates as ISO text), this 0.6.
 */
function eventKey(publication: FeedPublication, event: FeedEvent): string {
  let key = '';
  for (const [name, value] of Object.entries(eventData(event, revisionOf(event, publication.revisions))))
    key += `${name}\u0000${keyPart(value)}\u0001`;
  return key;
}

/**
 * The publication's resources, in its order: the one `previous` kept of each event whose data did not change, the
 * others rendered together and cut.
 */
export function resourcesOf(
  deps: Pick<FeedEventObjectsDeps, 'proofs' | 'render'>,
  feedId: string,
  publication: FeedPublication,
  previous?: Pick<KeptObjects, 'byEvent'>,
): Omit<KeptObjects, 'key'> {
  const { events } = publication.planned;
  const keys = events.map((event) => eventKey(publication, event));
  // Each event's kept resource, looked up once: the events without one are rendered below.
  const taken = keys.map((key) => previous?.byEvent.get(key));
  const missing = events.filter((_, i) => taken[i] === undefined);
  const made =
    missing.length === 0
      ? []
      : eventObjects(
          deps.render(publication.head, { events: missing, total: missing.length }, publication.revisions),
          feedId,
          deps.proofs,
        );
  if (made.length !== missing.length || made.some((object, i) => object.uid !== missing[i]!.uid)) {
    throw new Error(`feed ${feedId}: ${missing.length} events rendered as ${made.length} resources`);
  }
  const madeByUid = new Map(made.map((object) => [object.uid, object]));
  const byEvent = new Map<string, EventObject>();
  const objects = events.map((event, i) => {
    const object = taken[i] ?? madeByUid.get(event.uid)!;
    byEvent.set(keys[i]!, object);
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
  const resolved = await (
    read === undefined ? deps.feeds.resolve(feedId) : deps.feeds.resolveFrom(feedId, read)
  ).catch((error: unknown) => {
    deps.kept.delete(feedId);
    throw error;
  });
  if (resolved.feed.revokedAt !== null) {
    deps.kept.delete(feedId);
    return [];
  }
  const previous = deps.kept.get(feedId);
  // The version kept while its key is still the feed's, else a new one made with what it can take over. Only the
  // latest version is kept: a feed whose inputs go back to an earlier version's reads its content again.
  const cache: KeyedCache<Omit<KeptObjects, 'key'>> = {
    get: (key) => (previous?.key === key ? previous : undefined),
    set: (key, made) => deps.kept.set(feedId, { key, ...made }),
  };
  const made = await madeOfPublication(deps.publication, resolved, cache, (publication) =>
    resourcesOf(deps, feedId, publication, previous),
  );
  return made.objects;
}
