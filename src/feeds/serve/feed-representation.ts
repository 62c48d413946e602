// One feed's bytes and validators: from the render cache when nothing it depends on has changed, else read
// from the snapshots, planned, given its event revisions and rendered. The cache key comes from what the token
// lookup already resolved (the feed and its connection's declared inputs); the slots are read only on a miss.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { formatHttpDate } from '../../lib/http-date.js';
import type { FeedRecord, ResolvedFeed } from '../../store/feeds.js';
import { describeFeed, feedCalendarName } from '../describe-feed.js';
import { planFeedEvents } from '../feed-events.js';
import { viewOf } from '../feed-options.js';
import { renderCalendar } from '../render-feed.js';
import type { EventRevisionStore } from './event-revisions.js';
import { readFeedContent, type FeedContent } from './feed-content.js';
import { feedCacheKey, feedLastModified } from './feed-inputs.js';
import { feedWindow } from './feed-window.js';
import type { RenderCache, RenderedFeed } from './render-cache.js';
import type { PrismaClient } from '../../generated/prisma/client.js';

export interface FeedServingDeps {
  prisma: PrismaClient;
  revisions: EventRevisionStore;
  cache: RenderCache;
  settings: {
    feedDefaultDays: number;
    feedMaxEvents: number;
    feedGzip: boolean;
    refreshIntervalSeconds: number;
  };
  now: () => Date;
  /** Told whether a request was answered from the render cache. */
  onCacheLookup?: (result: 'hit' | 'miss') => void;
}

async function rendered(
  deps: FeedServingDeps,
  feed: FeedRecord,
  content: FeedContent,
): Promise<RenderedFeed> {
  const { connection } = content;
  const eventTitle =
    feed.upstreamEventId === null ? undefined : content.eventTypes.get(feed.upstreamEventId)?.title;
  const planned = planFeedEvents({
    connectionId: connection.id,
    view: viewOf(feed.options),
    eventTypes: content.eventTypes,
    slots: content.slots,
    bookings: content.bookings,
    merge: feed.options.merge ?? false,
    ...(feed.options.summary === undefined ? {} : { summary: feed.options.summary }),
    maxEvents: deps.settings.feedMaxEvents,
  });
  const lastModified = feedLastModified(feed, connection, content.windowStart);
  const revisions = await deps.revisions.revisionsFor(feed.id, planned.events, {
    contentChangedAt: lastModified,
    windowStart: content.windowStart,
  });
  const text = renderCalendar(
    {
      calendarName: feedCalendarName({
        displayName: connection.displayName,
        email: connection.email,
        ...(eventTitle === undefined ? {} : { eventTitle }),
      }),
      description: describeFeed({
        connection,
        view: viewOf(feed.options),
        refreshIntervalSeconds: deps.settings.refreshIntervalSeconds,
      }),
      refreshIntervalSeconds: deps.settings.refreshIntervalSeconds,
    },
    planned,
    revisions,
  );
  const body = Buffer.from(text, 'utf8');
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
  deps: FeedServingDeps,
  { feed, connection }: ResolvedFeed,
): Promise<RenderedFeed> {
  const now = deps.now();
  const defaultDays = deps.settings.feedDefaultDays;
  const days = feed.options.days ?? defaultDays;
  const windowKey = feedWindow(now, connection.timezone, days).windowKey;
  const cached = deps.cache.get(feedCacheKey(feed, connection, windowKey, defaultDays));
  deps.onCacheLookup?.(cached ? 'hit' : 'miss');
  if (cached) return cached;
  const content = await readFeedContent(deps.prisma, feed, { now, defaultDays });
  const result = await rendered(deps, feed, content);
  // Keyed by what was actually read: a sync may have committed since the connection row above was loaded.
  deps.cache.set(feedCacheKey(feed, content.connection, content.windowKey, defaultDays), result);
  return result;
}
