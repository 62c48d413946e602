// One feed's bytes and validators: from the render cache when nothing it depends on has changed, else read
// from the snapshots and rendered. The cache key comes from what the token lookup already resolved (the feed
// and its connection's state); the slots are read only on a miss.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describeFeed, feedCalendarName } from '../feeds/describe-feed.js';
import { feedOptionsKey } from '../feeds/feed-options.js';
import { renderFeed } from '../feeds/render-feed.js';
import { feedWindow, readFeedContent, type FeedContent } from '../store/feed-content.js';
import type { FeedRecord, ResolvedFeed } from '../store/feeds.js';
import { formatHttpDate } from './conditional-get.js';
import type { RenderCache, RenderedFeed } from './render-cache.js';
import type { WebDeps } from './web-deps.js';

type KeyParts = Pick<
  FeedContent['connection'],
  'feedVersion' | 'status' | 'displayName' | 'email' | 'timezone'
> & { windowKey: string };

/**
 * Everything the rendered bytes depend on besides the slots: the feed version moves whenever a sync changes
 * what a feed shows (and on needs_reauth); the window's first day moves at midnight in the account's zone;
 * the names and status feed the calendar's name and description.
 */
function cacheKeyOf(feed: FeedRecord, parts: KeyParts, defaultDays: number): string {
  const options = feedOptionsKey({ ...feed.options, days: feed.options.days ?? defaultDays });
  return JSON.stringify([
    feed.id,
    parts.feedVersion,
    parts.windowKey,
    options,
    parts.status,
    parts.displayName,
    parts.email,
    parts.timezone,
  ]);
}

function renderedFrom(feed: FeedRecord, content: FeedContent, deps: WebDeps): RenderedFeed {
  const { connection } = content;
  const eventTitle =
    feed.upstreamEventId === null ? undefined : content.eventTypes.get(feed.upstreamEventId)?.title;
  const text = renderFeed({
    connectionId: connection.id,
    calendarName: feedCalendarName({
      displayName: connection.displayName,
      email: connection.email,
      ...(eventTitle === undefined ? {} : { eventTitle }),
    }),
    description: describeFeed({
      displayName: connection.displayName,
      status: connection.status,
      feedChangedAt: connection.feedChangedAt,
      lastSyncOutcome: connection.lastSyncOutcome,
      zone: connection.timezone,
      refreshIntervalSeconds: deps.settings.refreshIntervalSeconds,
    }),
    refreshIntervalSeconds: deps.settings.refreshIntervalSeconds,
    eventTypes: content.eventTypes,
    slots: content.slots,
    merge: feed.options.merge ?? false,
    maxEvents: deps.settings.feedMaxEvents,
  });
  const body = Buffer.from(text, 'utf8');
  const lastModified = connection.feedChangedAt ?? feed.createdAt;
  return {
    body,
    // Node writes a zero mtime into the gzip header, so the compressed bytes are as stable as the text.
    gzipped: deps.settings.feedGzip ? gzipSync(body) : undefined,
    tag: createHash('sha256').update(body).digest('base64url').slice(0, 32),
    lastModified,
    lastModifiedHttpDate: formatHttpDate(lastModified),
  };
}

export async function feedRepresentation(
  deps: WebDeps,
  cache: RenderCache,
  { feed, connection }: ResolvedFeed,
): Promise<RenderedFeed> {
  const now = deps.now();
  const defaultDays = deps.settings.feedDefaultDays;
  const days = feed.options.days ?? defaultDays;
  const key = cacheKeyOf(
    feed,
    { ...connection, windowKey: feedWindow(now, connection.timezone, days).windowKey },
    defaultDays,
  );
  const cached = cache.get(key);
  if (cached) {
    deps.metrics.feedRenderCache.inc({ result: 'hit' });
    return cached;
  }
  deps.metrics.feedRenderCache.inc({ result: 'miss' });
  const content = await readFeedContent(deps.prisma, feed, {
    now,
    defaultDays,
    maxEvents: deps.settings.feedMaxEvents,
  });
  const rendered = renderedFrom(feed, content, deps);
  // Keyed by what was actually read: a sync may have committed since the connection row above was loaded.
  cache.set(cacheKeyOf(feed, { ...content.connection, windowKey: content.windowKey }, defaultDays), rendered);
  return rendered;
}
