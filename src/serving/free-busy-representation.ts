// A feed's free/busy (GET /freebusy/{token}.ifb): the same token, window, content and validators as the feed,
// read as free and busy time whatever the feed's own view, rendered as one VFREEBUSY. Cached like the feed
// under a key of its own. A team feed's free/busy has FREE periods only (its blocks): a team's busy time
// would be anyone's bookings, which its feed does not show either.
import { createHash } from 'node:crypto';
import type { ResolvedFeed } from '../store/feeds.js';
import { planFeedEvents } from '../feeds/feed-events.js';
import { renderFreeBusy } from '../feeds/free-busy.js';
import { readFeedContent, readTeamFeedContent, TEAM_FEED_ZONE } from './feed-content.js';
import { feedCacheKey, feedLastModified, teamFeedCacheKey, teamFeedLastModified } from './feed-validators.js';
import { planTeamFeed, type FeedServingDeps } from './feed-representation.js';
import { feedWindow } from './feed-window.js';
import type { FeedRecord } from '../store/feeds.js';
import { cachedOrMade, representationOf, type RenderedFeed } from './render-cache.js';

const freeBusyUid = (feed: Pick<FeedRecord, 'id'>) =>
  `${createHash('sha256').update(`freebusy\u0000${feed.id}`).digest('hex').slice(0, 32)}@slotfeed`;

/** Free/busy is small and fetched now and then: not gzipped. */
const freeBusyOf = (text: string, lastModified: Date) =>
  representationOf(text, lastModified, { gzip: false });

async function teamFreeBusy(
  deps: FeedServingDeps,
  resolved: Extract<ResolvedFeed, { kind: 'team' }>,
): Promise<RenderedFeed> {
  const { feed, team } = resolved;
  const now = deps.now();
  const defaultDays = deps.settings.feedDefaultDays;
  const keyOf = (windowKey: string, state: typeof team) =>
    `ifb:${teamFeedCacheKey(feed, state, windowKey, defaultDays)}`;
  const windowKey = feedWindow(now, TEAM_FEED_ZONE, feed.options.days ?? defaultDays).windowKey;
  return cachedOrMade(
    deps.cache,
    keyOf(windowKey, team),
    async () => {
      const content = await readTeamFeedContent(deps.content, feed, { now, defaultDays });
      const lastModified = teamFeedLastModified(feed, content.team, content.windowStart);
      const uncapped = { ...deps, settings: { ...deps.settings, feedMaxEvents: Number.MAX_SAFE_INTEGER } };
      const planned = planTeamFeed(uncapped, feed, content, lastModified);
      const text = renderFreeBusy({
        uid: freeBusyUid(feed),
        stamp: lastModified,
        windowStart: content.windowStart,
        windowEnd: content.windowEnd,
        free: planned.events,
        busy: [],
      });
      return { key: keyOf(content.windowKey, content.team), made: freeBusyOf(text, lastModified) };
    },
    deps.onCacheLookup,
  );
}

export async function freeBusyRepresentation(
  deps: FeedServingDeps,
  resolved: ResolvedFeed,
): Promise<RenderedFeed> {
  if (resolved.kind === 'team') return teamFreeBusy(deps, resolved);
  const { feed, connection } = resolved;
  const now = deps.now();
  const defaultDays = deps.settings.feedDefaultDays;
  const keyOf = (windowKey: string, state: typeof connection) =>
    `ifb:${feedCacheKey(feed, state, windowKey, defaultDays)}`;
  const windowKey = feedWindow(now, connection.timezone, feed.options.days ?? defaultDays).windowKey;
  return cachedOrMade(
    deps.cache,
    keyOf(windowKey, connection),
    async () => {
      const asFreeBusy = { ...feed, options: { ...feed.options, view: 'free+busy' as const } };
      const content = await readFeedContent(deps.content, asFreeBusy, { now, defaultDays });
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
        uid: freeBusyUid(feed),
        stamp: lastModified,
        windowStart: content.windowStart,
        windowEnd: content.windowEnd,
        free: planned.events.filter((e) => !e.busy),
        busy: planned.events.filter((e) => e.busy),
      });
      return { key: keyOf(content.windowKey, content.connection), made: freeBusyOf(text, lastModified) };
    },
    deps.onCacheLookup,
  );
}
