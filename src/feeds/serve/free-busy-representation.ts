// A feed's free/busy (GET /freebusy/{token}.ifb): the same token, window, content and validators as the feed,
// read as free and busy time whatever the feed's own view, rendered as one VFREEBUSY. Cached like the feed
// under a key of its own. A team feed's free/busy has FREE periods only (its blocks): a team's busy time
// would be anyone's bookings, which its feed does not show either.
import { createHash } from 'node:crypto';
import { formatHttpDate } from '../../lib/http-date.js';
import type { ResolvedFeed } from '../../store/feeds.js';
import { planFeedEvents } from '../feed-events.js';
import { renderFreeBusy } from '../free-busy.js';
import { readFeedContent } from './feed-content.js';
import { feedCacheKey, feedLastModified, teamFeedCacheKey, teamFeedLastModified } from './feed-inputs.js';
import { planTeamFeed, type FeedServingDeps } from './feed-representation.js';
import { feedWindow } from './feed-window.js';
import { readTeamFeedContent, TEAM_FEED_ZONE } from './team-feed-content.js';
import type { FeedRecord } from '../../store/feeds.js';
import type { RenderedFeed } from './render-cache.js';

const freeBusyUid = (feed: Pick<FeedRecord, 'id'>) =>
  `${createHash('sha256').update(`freebusy\u0000${feed.id}`).digest('hex').slice(0, 32)}@slotfeed`;

function representation(text: string, lastModified: Date): RenderedFeed {
  const body = Buffer.from(text, 'utf8');
  return {
    body,
    gzipped: undefined,
    tag: createHash('sha256').update(body).digest('base64url').slice(0, 32),
    lastModified,
    lastModifiedHttpDate: formatHttpDate(lastModified),
  };
}

async function teamFreeBusy(
  deps: FeedServingDeps,
  resolved: Extract<ResolvedFeed, { kind: 'team' }>,
): Promise<RenderedFeed> {
  const { feed, team } = resolved;
  const now = deps.now();
  const defaultDays = deps.settings.feedDefaultDays;
  const keyOf = (windowKey: string, state: typeof team) =>
    `ifb:${teamFeedCacheKey(feed, state, windowKey, defaultDays)}`;
  const cached = deps.cache.get(
    keyOf(feedWindow(now, TEAM_FEED_ZONE, feed.options.days ?? defaultDays).windowKey, team),
  );
  deps.onCacheLookup?.(cached ? 'hit' : 'miss');
  if (cached) return cached;
  const content = await readTeamFeedContent(deps.prisma, feed, { now, defaultDays });
  const lastModified = teamFeedLastModified(feed, content.team, content.windowStart);
  const uncapped = { ...deps, settings: { ...deps.settings, feedMaxEvents: Number.MAX_SAFE_INTEGER } };
  const planned = planTeamFeed(uncapped, feed, content, lastModified);
  const rendered = representation(
    renderFreeBusy({
      uid: freeBusyUid(feed),
      stamp: lastModified,
      windowStart: content.windowStart,
      windowEnd: content.windowEnd,
      free: planned.events,
      busy: [],
    }),
    lastModified,
  );
  deps.cache.set(keyOf(content.windowKey, content.team), rendered);
  return rendered;
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
  const rendered = representation(
    renderFreeBusy({
      uid: freeBusyUid(feed),
      stamp: lastModified,
      windowStart: content.windowStart,
      windowEnd: content.windowEnd,
      free: planned.events.filter((e) => !e.busy),
      busy: planned.events.filter((e) => e.busy),
    }),
    lastModified,
  );
  deps.cache.set(keyOf(content.windowKey, content.connection), rendered);
  return rendered;
}
