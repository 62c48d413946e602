// Feeds as the web role serves them, assembled once: the token lookup (feed-lookup.ts), the render cache and
// event revisions behind each representation, and the bytes kept for an outage (last-good-feeds.ts). The feed
// routes add HTTP to this: validators, compression, status codes.
import type { EventRevisionStore } from '../store/event-revisions.js';
import type { FeedChangeListener } from '../store/feed-change-listener.js';
import type { FeedContentStore } from '../store/feed-content.js';
import { ConnectionNotFoundError } from '../store/connections.js';
import type { FeedStore, ResolvedFeed } from '../store/feeds.js';
import { TeamNotFoundError } from '../store/teams.js';
import { createEventRevisions } from './event-revisions.js';
import { createFeedLookup, type HashedToken, type LookupResult } from './feed-lookup.js';
import { feedRepresentation, type FeedServingDeps } from './feed-representation.js';
import { freeBusyRepresentation } from './free-busy-representation.js';
import { createLastGoodFeeds, type LastGoodFeeds, type RecheckResult } from './last-good-feeds.js';
import { createRenderCache, type RenderedFeed } from './render-cache.js';

export interface FeedServingSettings {
  feedDefaultDays: number;
  feedMaxEvents: number;
  feedGzip: boolean;
  refreshIntervalSeconds: number;
  feedOutageGraceSeconds: number;
  /** Upper bound of the render cache, in bytes (its default when absent). */
  renderCacheMaxBytes?: number;
}

export interface FeedServingOptions {
  feeds: Pick<FeedStore, 'resolveTokenHash'>;
  content: FeedContentStore;
  eventRevisions: EventRevisionStore;
  changes: FeedChangeListener;
  settings: FeedServingSettings;
  now: () => Date;
  /** Told how each token lookup, render cache lookup and recheck after a notice went (for metrics). */
  observe?: {
    lookup?: (result: LookupResult) => void;
    renderCache?: (result: 'hit' | 'miss') => void;
    recheck?: (result: RecheckResult) => void;
  };
}

export interface FeedServing {
  /** The feed and its bytes as the database has them now; undefined when no active feed has this token. */
  current(token: HashedToken): Promise<{ resolved: ResolvedFeed; rendered: RenderedFeed } | undefined>;
  /** The active feed with this token (hash) and its owner's state, from the remembered lookup. */
  resolve(token: HashedToken): Promise<ResolvedFeed | undefined>;
  /** The feed's free/busy as the database has it now; undefined when no active feed has this token. */
  freeBusy(token: HashedToken): Promise<RenderedFeed | undefined>;
  /** What feeds answer with while Postgres cannot (the feed route and readiness share it). */
  lastGood: LastGoodFeeds;
  close(): void;
}

/** The connection or team was deleted (its feeds with it) between the token lookup and the render. */
const ownerGone = (thrown: unknown) =>
  thrown instanceof ConnectionNotFoundError || thrown instanceof TeamNotFoundError;

export function createFeedServing(options: FeedServingOptions): FeedServing {
  const { settings, now, observe = {} } = options;
  const load = (tokenHash: Buffer) => options.feeds.resolveTokenHash(tokenHash);
  const representations: FeedServingDeps = {
    content: options.content,
    revisions: createEventRevisions(options.eventRevisions),
    cache: createRenderCache(settings.renderCacheMaxBytes),
    settings,
    now,
    onCacheLookup: observe.renderCache,
  };
  const lastGood = createLastGoodFeeds({
    load,
    changes: options.changes,
    graceSeconds: settings.feedOutageGraceSeconds,
    now,
    onRecheck: observe.recheck,
  });
  const lookup = createFeedLookup({
    load,
    changes: options.changes,
    onLookup: observe.lookup,
  });

  return {
    async current(token) {
      const resolved = await lookup.resolveHashed(token);
      if (resolved === undefined) return undefined;
      try {
        return { resolved, rendered: await feedRepresentation(representations, resolved) };
      } catch (thrown: unknown) {
        if (ownerGone(thrown)) return undefined;
        throw thrown;
      }
    },

    resolve: (token) => lookup.resolveHashed(token),

    async freeBusy(token) {
      try {
        const resolved = await lookup.resolveHashed(token);
        return resolved === undefined ? undefined : await freeBusyRepresentation(representations, resolved);
      } catch (thrown: unknown) {
        if (ownerGone(thrown)) return undefined;
        throw thrown;
      }
    },

    lastGood,
    close: () => lastGood.close(),
  };
}
