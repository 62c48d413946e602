// The JSON API's availability, computed from what the feeds read (feed-content.ts) over a range asked for: the
// same free blocks, slots, busy time and team maths as the feeds, as data (web/api shapes it into answers).
import { busyBlocks, type BusyBlock } from '../feeds/busy-blocks.js';
import { usableFreeBlocks } from '../feeds/feed-events.js';
import type { FeedConnectionState, FeedTeamState } from '../feeds/feed-inputs.js';
import type { FeedEventType, FeedSlot } from '../feeds/feed-model.js';
import type { FreeBlock } from '../feeds/free-blocks.js';
import { allFree, anyFree, type TeamBlock } from '../feeds/team-availability.js';
import type { FeedContentStore } from '../store/feed-content.js';
import { readFeedContent, readTeamFeedContent, TEAM_FEED_ZONE } from './feed-content.js';
import { feedWindow, type FeedWindow } from './feed-window.js';

/** A range cut to the days a feed's token may read (from the start of today in `zone`); null days: all of it. */
export function withinDays(
  range: FeedWindow,
  days: number | null,
  zone: string | null,
  now: Date,
): FeedWindow {
  if (days === null) return range;
  const shown = feedWindow(now, zone, days);
  const windowStart = new Date(Math.max(range.windowStart.getTime(), shown.windowStart.getTime()));
  const windowEnd = new Date(
    Math.max(windowStart.getTime(), Math.min(range.windowEnd.getTime(), shown.windowEnd.getTime())),
  );
  return { windowStart, windowEnd, windowKey: `${range.windowKey}/${shown.windowKey}` };
}

export interface ConnectionAvailability<R extends FeedWindow> {
  /** The range asked for, as settled once the account's zone was known. */
  range: R;
  connection: FeedConnectionState;
  /** The event types read (current versions): what a free block's event ids name, with their booking pages. */
  eventTypes: ReadonlyMap<string, FeedEventType>;
  free: FreeBlock[];
  /** Open slots that take time (a slot ending where it starts is no time to book). */
  slots: FeedSlot[];
  /** Busy time; none unless asked for. */
  busy: BusyBlock[];
}

/** A connection's availability. Throws ConnectionNotFoundError. */
export async function connectionAvailability<R extends FeedWindow>(
  store: Pick<FeedContentStore, 'accountZone' | 'currentEventTypes' | 'forConnection'>,
  input: {
    connectionId: string;
    /** The event type to read, chosen from the connection's current ones; null for every one a feed shows. */
    eventTypeFrom: (current: Awaited<ReturnType<FeedContentStore['currentEventTypes']>>) => string | null;
    /** The range asked for, in the account's zone unless the request chose one. */
    rangeIn: (accountZone: string | null) => R;
    /** The days from today a feed's token may read; null for any. */
    days: number | null;
    withBusy: boolean;
    now: Date;
  },
): Promise<ConnectionAvailability<R>> {
  const { connectionId, now } = input;
  const zone = await store.accountZone(connectionId);
  const eventType = input.eventTypeFrom(await store.currentEventTypes(connectionId));
  const range = input.rangeIn(zone);
  const content = await readFeedContent(
    store,
    { connectionId, upstreamEventId: eventType, options: { view: input.withBusy ? 'free+busy' : 'free' } },
    { now, defaultDays: 1, window: withinDays(range, input.days, zone, now) },
  );
  const free = usableFreeBlocks({ eventTypes: content.eventTypes, slots: content.slots });
  return {
    range,
    connection: content.connection,
    eventTypes: content.eventTypes,
    free,
    slots: content.slots.filter((s) => s.endsAt.getTime() > s.startsAt.getTime()),
    busy: busyBlocks(content.bookings, free),
  };
}

export interface TeamAvailability {
  team: FeedTeamState;
  blocks: TeamBlock[];
  /** The latest change of the membership or of any member's feeds. */
  changedAt: Date;
}

/**
 * A team's availability: when everyone is free for at least `minimumMinutes`, or (null) who is free when.
 * Throws TeamNotFoundError.
 */
export async function teamAvailability(
  store: Pick<FeedContentStore, 'forTeam'>,
  input: { teamId: string; minimumMinutes: number | null; days: number | null; range: FeedWindow; now: Date },
): Promise<TeamAvailability> {
  const { now } = input;
  const content = await readTeamFeedContent(
    store,
    { teamId: input.teamId, options: {} },
    { now, defaultDays: 1, window: withinDays(input.range, input.days, TEAM_FEED_ZONE, now) },
  );
  const blocks =
    input.minimumMinutes !== null
      ? allFree(content.members, { minimumMinutes: input.minimumMinutes })
      : anyFree(content.members);
  const changes = [
    content.team.membersChangedAt,
    ...content.team.members.flatMap((m) => (m.feedChangedAt ? [m.feedChangedAt] : [])),
  ];
  return { team: content.team, blocks, changedAt: new Date(Math.max(...changes.map((d) => d.getTime()))) };
}
