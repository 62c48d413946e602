// One feed's bytes and validators: from the render cache when nothing it depends on has changed, else read
// from the snapshots, planned, given its event revisions and rendered. The cache key comes from what the token
// lookup already resolved (the feed and its connection's declared inputs, or its team's and every member's);
// the slots are read only on a miss. The same publication (head, planned events, revisions), before it is text,
// is what a CalDAV push cuts into event resources (destinations/feed-event-objects.ts), under the same keys.
import type { FeedRecord, ResolvedFeed } from '../store/feeds.js';
import {
  describeFeed,
  describeTeamFeed,
  feedCalendarName,
  teamFeedCalendarName,
} from '../feeds/describe-feed.js';
import { planFeedEvents, type PlannedFeed } from '../feeds/feed-events.js';
import { DEFAULT_TEAM_MINIMUM_MINUTES, DEFAULT_TEAM_MODE, viewOf } from '../feeds/feed-options.js';
import type { EventRevision } from '../feeds/feed-model.js';
import { renderCalendar, type CalendarHead } from '../feeds/render-feed.js';
import { planTeamFeedEvents } from '../feeds/team-feed-events.js';
import type { EventRevisions } from './event-revisions.js';
import {
  readFeedContent,
  readTeamFeedContent,
  TEAM_FEED_ZONE,
  type FeedContent,
  type TeamFeedContent,
} from './feed-content.js';
import { feedCacheKey, feedLastModified, teamFeedCacheKey, teamFeedLastModified } from './feed-validators.js';
import { feedWindow } from './feed-window.js';
import {
  cachedOrMade,
  representationOf,
  type KeyedCache,
  type RenderCache,
  type RenderedFeed,
} from './render-cache.js';
import type { FeedContentStore } from '../store/feed-content.js';

/** What a feed's publication is made from (a CalDAV push's too): the feed route's deps but its cache and gzip. */
export interface PublicationDeps {
  content: FeedContentStore;
  revisions: EventRevisions;
  settings: {
    feedDefaultDays: number;
    feedMaxEvents: number;
    refreshIntervalSeconds: number;
  };
  now: () => Date;
}

export interface FeedServingDeps extends PublicationDeps {
  cache: RenderCache;
  settings: PublicationDeps['settings'] & { feedGzip: boolean };
  /** Told whether a request was answered from the render cache. */
  onCacheLookup?: (result: 'hit' | 'miss') => void;
}

/**
 * What a feed publishes, before it is text: the calendar's head, its events as planned and each event's revision.
 * The feed route renders it whole (renderCalendar); a CalDAV push cuts it into one resource per event.
 */
export interface FeedPublication {
  head: CalendarHead;
  planned: PlannedFeed;
  revisions: ReadonlyMap<string, EventRevision>;
  lastModified: Date;
}

/** Revisions looked up (and stored) for the planned events, with the head and validators they go out with. */
async function published(
  deps: PublicationDeps,
  feed: FeedRecord,
  head: Omit<CalendarHead, 'refreshIntervalSeconds'>,
  planned: PlannedFeed,
  at: { lastModified: Date; windowStart: Date },
): Promise<FeedPublication> {
  const { lastModified } = at;
  const revisions = await deps.revisions.revisionsFor(feed.id, planned.events, {
    contentChangedAt: lastModified,
    windowStart: at.windowStart,
  });
  return {
    head: { ...head, refreshIntervalSeconds: deps.settings.refreshIntervalSeconds },
    planned,
    revisions,
    lastModified,
  };
}

/** The publication as the feed route serves it: the text, its compressed bytes and validators. */
export const representationOfPublication = (
  publication: FeedPublication,
  options: { gzip: boolean },
): RenderedFeed =>
  representationOf(
    renderCalendar(publication.head, publication.planned, publication.revisions),
    publication.lastModified,
    options,
  );

async function publicationOf(
  deps: PublicationDeps,
  feed: FeedRecord,
  content: FeedContent,
): Promise<FeedPublication> {
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
  return published(
    deps,
    feed,
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
    },
    planned,
    {
      lastModified: feedLastModified(feed, connection, content.windowStart),
      windowStart: content.windowStart,
    },
  );
}

/** A team feed's mode and minimum, with the defaults its options were normalised with. */
export const teamModeOf = (feed: Pick<FeedRecord, 'options'>) => ({
  mode: feed.options.mode ?? DEFAULT_TEAM_MODE,
  minimumMinutes: feed.options.minimum ?? DEFAULT_TEAM_MINIMUM_MINUTES,
});

/** A team feed's events: when everyone (or who) is free. */
export function planTeamFeed(
  deps: Pick<PublicationDeps, 'settings'>,
  feed: FeedRecord,
  content: TeamFeedContent,
  changedAt: Date,
): PlannedFeed {
  return planTeamFeedEvents({
    teamId: content.team.id,
    ...teamModeOf(feed),
    members: content.members,
    ...(feed.options.summary === undefined ? {} : { summary: feed.options.summary }),
    maxEvents: deps.settings.feedMaxEvents,
    changedAt,
  });
}

async function teamPublicationOf(
  deps: PublicationDeps,
  feed: FeedRecord,
  content: TeamFeedContent,
): Promise<FeedPublication> {
  const { team } = content;
  const { mode, minimumMinutes } = teamModeOf(feed);
  const lastModified = teamFeedLastModified(feed, team, content.windowStart);
  return published(
    deps,
    feed,
    {
      calendarName: teamFeedCalendarName({ teamName: team.name, mode }),
      description: describeTeamFeed({
        teamName: team.name,
        mode,
        minimumMinutes,
        members: team.members,
        refreshIntervalSeconds: deps.settings.refreshIntervalSeconds,
      }),
    },
    planTeamFeed(deps, feed, content, lastModified),
    { lastModified, windowStart: content.windowStart },
  );
}

/**
 * What `make` makes of the feed's publication, from `cache` when nothing the feed depends on has changed (the key
 * comes from what the token lookup already resolved), else read from the snapshots, planned, given its revisions
 * and made, then cached under the key of what was read.
 */
export async function madeOfPublication<T>(
  deps: PublicationDeps,
  resolved: ResolvedFeed,
  cache: KeyedCache<T>,
  make: (publication: FeedPublication) => T,
  onCacheLookup?: (result: 'hit' | 'miss') => void,
): Promise<T> {
  const now = deps.now();
  const defaultDays = deps.settings.feedDefaultDays;
  if (resolved.kind === 'team') {
    const { feed, team } = resolved;
    const windowKey = feedWindow(now, TEAM_FEED_ZONE, feed.options.days ?? defaultDays).windowKey;
    return cachedOrMade(
      cache,
      teamFeedCacheKey(feed, team, windowKey, defaultDays),
      async () => {
        const content = await readTeamFeedContent(deps.content, feed, { now, defaultDays });
        return {
          key: teamFeedCacheKey(feed, content.team, content.windowKey, defaultDays),
          made: make(await teamPublicationOf(deps, feed, content)),
        };
      },
      onCacheLookup,
    );
  }
  const { feed, connection } = resolved;
  const days = feed.options.days ?? defaultDays;
  const windowKey = feedWindow(now, connection.timezone, days).windowKey;
  return cachedOrMade(
    cache,
    feedCacheKey(feed, connection, windowKey, defaultDays),
    async () => {
      const content = await readFeedContent(deps.content, feed, {
        now,
        defaultDays,
        expectedZone: connection.timezone,
      });
      return {
        key: feedCacheKey(feed, content.connection, content.windowKey, defaultDays),
        made: make(await publicationOf(deps, feed, content)),
      };
    },
    onCacheLookup,
  );
}

/** One feed's bytes and validators, as the feed route serves them. */
export const feedRepresentation = (deps: FeedServingDeps, resolved: ResolvedFeed): Promise<RenderedFeed> =>
  madeOfPublication(
    deps,
    resolved,
    deps.cache,
    (publication) => representationOfPublication(publication, { gzip: deps.settings.feedGzip }),
    deps.onCacheLookup,
  );
