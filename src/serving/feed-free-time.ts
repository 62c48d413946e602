// A feed's free time over a range, as its own token reads it through the JSON API (web/api/api-scope.ts): its
// event type (never a secret one it does not name, never a disabled one), only the days it shows (from the start
// of today in the account's zone), free time only where its view shows free time or slots, a team feed's own
// mode and minimum. Computed by the same functions the API's answers are (availability.ts), so a share page
// shows exactly what the API shows for that feed, and each block keeps what can be booked in it.
import { bookingUrl } from '../feeds/feed-events.js';
import { DEFAULT_TEAM_MINIMUM_MINUTES, showsFree, viewOf } from '../feeds/feed-options.js';
import type { ResolvedFeed } from '../store/feeds.js';
import type { FeedContentStore } from '../store/feed-content.js';
import { compareText } from '../feeds/merge-slots.js';
import { connectionAvailability, teamAvailability } from './availability.js';
import { feedRowChangedAt } from './feed-validators.js';
import type { FeedWindow } from './feed-window.js';

/** What can be booked in a block: an event type's title and its booking page (absent when it has none). */
export interface BlockOffer {
  title: string;
  url?: string;
}

export interface FreeTimeBlock {
  startsAt: Date;
  endsAt: Date;
  /** A person's feed: each event type bookable in the block, by title. */
  offers: BlockOffer[];
  /** A team feed: who is free then, by name. */
  free: string[];
}

export interface FeedFreeTime {
  blocks: FreeTimeBlock[];
  /** When what was read last changed: the data, the feed's own inputs (null when never synced). */
  changedAt: Date | null;
}

/** The days from today the feed's token may read. */
export const daysShown = (feed: ResolvedFeed['feed'], defaultDays: number): number =>
  feed.options.days ?? defaultDays;

/** Whether the feed's view shows free time at all (a busy-only feed shares none). */
export const showsFreeTime = (feed: ResolvedFeed['feed']): boolean => {
  const view = viewOf(feed.options);
  return showsFree(view) || view === 'slots';
};

const latest = (...dates: (Date | null)[]): Date | null => {
  const times = dates.flatMap((d) => (d === null ? [] : [d.getTime()]));
  return times.length === 0 ? null : new Date(Math.max(...times));
};

export async function feedFreeTime(
  store: Pick<FeedContentStore, 'accountZone' | 'currentEventTypes' | 'forConnection' | 'forTeam'>,
  resolved: ResolvedFeed,
  input: { range: FeedWindow; defaultDays: number; now: Date },
): Promise<FeedFreeTime> {
  const { feed } = resolved;
  const days = daysShown(feed, input.defaultDays);
  if (resolved.kind === 'team') {
    const mode = feed.options.mode ?? 'all';
    const { blocks, changedAt } = await teamAvailability(store, {
      teamId: resolved.team.id,
      minimumMinutes: mode === 'all' ? (feed.options.minimum ?? DEFAULT_TEAM_MINIMUM_MINUTES) : null,
      days,
      range: input.range,
      now: input.now,
    });
    return {
      blocks: blocks.map((b) => ({
        startsAt: b.startsAt,
        endsAt: b.endsAt,
        offers: [],
        free: b.free.map((m) => m.name),
      })),
      changedAt: latest(changedAt, feedRowChangedAt(feed)),
    };
  }
  const { connection, eventTypes, free } = await connectionAvailability(store, {
    connectionId: resolved.connection.id,
    eventTypeFrom: () => feed.upstreamEventId,
    rangeIn: () => input.range,
    days,
    withBusy: false,
    now: input.now,
  });
  const shown = showsFreeTime(feed);
  return {
    blocks: shown
      ? free.map((b) => ({
          startsAt: b.startsAt,
          endsAt: b.endsAt,
          offers: b.eventIds
            .flatMap((id) => {
              const eventType = eventTypes.get(id);
              if (!eventType) return [];
              const url = bookingUrl(eventType.url);
              return [{ title: eventType.title, ...(url ? { url } : {}) }];
            })
            .sort((a, b) => compareText(a.title, b.title)),
          free: [],
        }))
      : [],
    changedAt: latest(connection.feedChangedAt, feedRowChangedAt(feed)),
  };
}
