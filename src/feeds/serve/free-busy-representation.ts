// A feed's free/busy (GET /freebusy/{token}.ifb): the same token, window, content and validators as the feed,
// read as free and busy time whatever the feed's own view, rendered as one VFREEBUSY. Cached like the feed
// under a key of its own.
import { createHash } from 'node:crypto';
import { formatHttpDate } from '../../lib/http-date.js';
import type { ResolvedFeed } from '../../store/feeds.js';
import { planFeedEvents } from '../feed-events.js';
import { renderFreeBusy } from '../free-busy.js';
import { readFeedContent } from './feed-content.js';
import { feedCacheKey, feedLastModified } from './feed-inputs.js';
import type { FeedServingDeps } from './feed-representation.js';
import { feedWindow } from './feed-window.js';
import type { RenderedFeed } from './render-cache.js';

export async function freeBusyRepresentation(
  deps: FeedServingDeps,
  { feed, connection }: ResolvedFeed,
): Promise<RenderedFeed> {
  const now = deps.now();
  const defaultDays = deps.settings.feedDefaultDays;
  const keyOf = (windowKey: string, state: ResolvedFeed['connection']) =>
    `ifb:${feedCacheKey(feed, state, windowKey, defaultDays)}`;
  const cached = deps.cache.get(
    keyOf(feedWindow(now, connection.timezone, feed.options.days ?? defaultDays).windowKey, connection),
  );
  deps.onCacheLookup?.(cached ? 'hit' : 'miss');
  if (cached) return cached;

  const asFreeBusy = { ...feed, options: { ...feed.options, view: 'free+busy' as const } };
  const content = await readFeedContent(deps.prisma, asFreeBusy, { now, defaultDays });
  const planned = planFeedEvents({
    connectionId: content.connection.id,
    view: 'free+busy',
    eventTypes: content.eventTypes,
    slots: content.slots,
    bookings: content.bookings,
    merge: false,
    maxEvents: Number.MAX_SAFE_INTEGER,
  });
  const lastModified = feedLastModified(feed, content.connection, content.windowStart);
  const text = renderFreeBusy({
    uid: `${createHash('sha256').update(`freebusy\u0000${feed.id}`).digest('hex').slice(0, 32)}@slotfeed`,
    stamp: lastModified,
    windowStart: content.windowStart,
    windowEnd: content.windowEnd,
    free: planned.events.filter((e) => !e.busy),
    busy: planned.events.filter((e) => e.busy),
  });
  const body = Buffer.from(text, 'utf8');
  const rendered: RenderedFeed = {
    body,
    gzipped: undefined,
    tag: createHash('sha256').update(body).digest('base64url').slice(0, 32),
    lastModified,
    lastModifiedHttpDate: formatHttpDate(lastModified),
  };
  deps.cache.set(keyOf(content.windowKey, content.connection), rendered);
  return rendered;
}
