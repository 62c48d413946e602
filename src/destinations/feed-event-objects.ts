// What a destination's feed shows now, as event resources: the feed resolved by id, or from what the push's opening
// statement read of it (its row and its owner's state, as a token lookup resolves it), rendered by the feed
// route's own representation (serving/: the same plan, revisions, cap and render cache), then cut into one
// resource per event. A revoked feed shows nothing.
// The cut (each event's proof and digest) is kept with the rendered feed it was cut from, so every destination of
// one feed version shares it: a new version is a new render, and the cut made of the old one goes with it.
import type { FeedServingDeps } from '../serving/feed-representation.js';
import { feedRepresentation } from '../serving/feed-representation.js';
import type { RenderedFeed } from '../serving/render-cache.js';
import type { ResolvedFeedJson } from '../store/feed-row-json.js';
import type { FeedStore } from '../store/feeds.js';
import { eventObjects, type EventObject } from './event-objects.js';
import type { EventProofs } from './event-proofs.js';

export interface FeedEventObjectsDeps {
  feeds: Pick<FeedStore, 'resolve' | 'resolveFrom'>;
  /** As the web role's feed serving has them; the render cache is the caller's own. */
  representation: FeedServingDeps;
  proofs: Pick<EventProofs, 'sign'>;
  /** The events cut from each rendered feed still in the render cache (createEventObjectsCut). */
  cuts: WeakMap<RenderedFeed, EventObject[]>;
}

export const createEventObjectsCut = (): FeedEventObjectsDeps['cuts'] => new WeakMap();

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
  const rendered = await feedRepresentation(deps.representation, resolved);
  let objects = deps.cuts.get(rendered);
  if (objects === undefined) {
    objects = eventObjects(rendered.body.toString('utf8'), feedId, deps.proofs);
    deps.cuts.set(rendered, objects);
  }
  return objects;
}
