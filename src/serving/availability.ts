// The JSON API's availability, computed from what the feeds read (feed-content.ts) over a range asked for: the
// same free blocks, slots, busy time and team maths as the feeds, as data (web/api shapes it into answers).
import { busyBlocks, type BusyBlock } from '../feeds/busy-blocks.js';
import { usableFreeBlocks } from '../feeds/feed-events.js';
import type { FeedConnectionState, FeedTeamState } from '../feeds/feed-inputs.js';
import type { FeedEventType, FeedSlot } from '../feeds/feed-model.js';
import type { FreeBlock } from '../feeds/free-blocks.js';
import { allFree, anyFree, type TeamBlock } from '../feeds/team-availability.js';
import type { ContentWindow, FeedContentStore } from '../store/feed-content.js';
import { readFeedContent, readTeamFeedContent, TEAM_FEED_ZONE } from './feed-content.js';
import { feedWindow, type FeedWindow } from './feed-window.js';

/**
 * A range cut to the days a feed's token may read (from the start of today in `zone`); null days: all of it.
 * Its edges: runs of slots across them are read whole within those days, and one under way at the range's
 * start is known to have started before it unless the range starts today (or earlier), where it is shown from
 * then on, as the feeds show it.
 */
export function withinDays(
  range: FeedWindow,
  days: number | null,
  zone: string | null,
  now: Date,
): FeedWindow & Required<Pick<ContentWindow, 'edges'>> {
  const shown = feedWindow(now, zone, days ?? 1);
  if (days === null) return { ...range, edges: { from: shown.windowStart, until: null } };
  const windowStart = new Date(Math.max(range.windowStart.getTime(), shown.windowStart.getTime()));
  const windowEnd = new Date(
    Math.max(windowStart.getTime(), Math.min(range.windowEnd.getTime(), shown.windowEnd.getTime())),
  );
  return {
    windowStart,
    windowEnd,
    windowKey: `${range.windowKey}/${shown.windowKey}`,
    edges: { from: shown.windowStart, until: shown.windowEnd },
  };
}

/** The blocks listed for a window: those starting in it (each whole, past its end if it runs on). */
const startingIn = <B extends { startsAt: Date }>(blocks: readonly B[], window: FeedWindow): B[] =>
  blocks.filter(
    (b) =>
      b.startsAt.getTime() >= window.windowStart.getTime() &&
      b.startsAt.getTime() < window.windowEnd.getTime(),
  );

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
  const window = withinDays(range, input.days, zone, now);
  const content = await readFeedContent(
    store,
    { connectionId, upstreamEventId: eventType, options: { view: input.withBusy ? 'free+busy' : 'free' } },
    { now, defaultDays: 1, window },
  );
  const free = usableFreeBlocks({
    eventTypes: content.eventTypes,
    slots: [...content.slots, ...content.slotsAround],
  });
  return {
    range,
    connection: content.connection,
    eventTypes: content.eventTypes,
    free: startingIn(free, window),
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
  const window = withinDays(input.range, input.days, TEAM_FEED_ZONE, now);
  const content = await readTeamFeedContent(
    store,
    { teamId: input.teamId, options: {} },
    { now, defaultDays: 1, window },
  );
  const blocks = startingIn(
    input.minimumMinutes !== null
      ? allFree(content.members, { minimumMinutes: input.minimumMinutes })
      : anyFree(content.members),
    window,
  );
  const changes = [
    content.team.membersChangedAt,
    ...content.team.members.flatMap((m) => (m.feedChangedAt ? [m.feedChangedAt] : [])),
  ];
  return { team: content.team, blocks, changedAt: new Date(Math.max(...changes.map((d) => d.getTime()))) };
}
