// What one feed shows, read from the snapshots (store/feed-content.ts reads each in one transaction): a
// person's feed, its connection's state, its event types and open slots in its window (read whole: the cap
// applies to events, after merging, in feed-events.ts), and its bookings when its view shows busy time; a team
// feed, its team's and members' state, and each member's free time from the open slots of the event types
// their own default feed would show (enabled, not secret). A member whose account needs re-authorisation has
// kept its last good snapshot in the store, so it contributes that.
import type { FeedConnectionState, FeedTeamState } from '../feeds/feed-inputs.js';
import { usableFreeBlocks } from '../feeds/feed-events.js';
import {
  includedEventIds,
  type FeedBooking,
  type FeedEventType,
  type FeedSlot,
} from '../feeds/feed-model.js';
import { showsBusy, viewOf } from '../feeds/feed-options.js';
import type { TeamMemberTime } from '../feeds/team-availability.js';
import { memberName } from '../feeds/team-feed-events.js';
import type { ContentWindow, FeedContentStore } from '../store/feed-content.js';
import type { FeedRecord } from '../store/feeds.js';
import { feedWindow, type FeedWindow } from './feed-window.js';

export interface FeedContent extends FeedWindow {
  connection: FeedConnectionState;
  /** Current versions of the event types the feed may show (enabled; secret ones only when named). */
  eventTypes: Map<string, FeedEventType>;
  /** Open slots of those event types in [windowStart, windowEnd), by start then event type. */
  slots: FeedSlot[];
  /** With a window's `edges`: open slots of those event types outside it joining runs across its edges. */
  slotsAround: FeedSlot[];
  /** Busy views: inferred bookings that closed slots of those event types, starting in the window. */
  bookings: FeedBooking[];
}

/** A team spans zones: its window runs from today's start in UTC. */
export const TEAM_FEED_ZONE = 'UTC';

export interface TeamFeedContent extends FeedWindow {
  team: FeedTeamState;
  /**
   * Every member, in the team's fixed order, with their free time in the window (with its `edges`, each run
   * across them whole).
   */
  members: TeamMemberTime[];
}

interface ReadSettings {
  now: Date;
  defaultDays: number;
  /** A range of the caller's own (the JSON API's) instead of the feed's rolling window. */
  window?: FeedWindow & Pick<ContentWindow, 'edges'>;
  /** The account's zone as the caller resolved it: the content is then read in one statement (store). */
  expectedZone?: string | null;
}

export async function readFeedContent(
  store: Pick<FeedContentStore, 'forConnection'>,
  feed: Pick<FeedRecord, 'connectionId' | 'upstreamEventId' | 'options'>,
  settings: ReadSettings,
): Promise<FeedContent> {
  const { connection, window, eventTypes, slots, slotsAround, bookings } = await store.forConnection(
    {
      connectionId: feed.connectionId ?? '',
      upstreamEventId: feed.upstreamEventId,
      withBookings: showsBusy(viewOf(feed.options)),
      ...(settings.expectedZone === undefined ? {} : { expectedZone: settings.expectedZone }),
    },
    (zone) => settings.window ?? feedWindow(settings.now, zone, feed.options.days ?? settings.defaultDays),
  );
  return {
    connection,
    eventTypes,
    slots,
    slotsAround,
    bookings,
    windowStart: window.windowStart,
    windowEnd: window.windowEnd,
    windowKey: window.windowKey,
  };
}

export async function readTeamFeedContent(
  store: Pick<FeedContentStore, 'forTeam'>,
  feed: Pick<FeedRecord, 'teamId' | 'options'>,
  settings: ReadSettings,
): Promise<TeamFeedContent> {
  const window =
    settings.window ?? feedWindow(settings.now, TEAM_FEED_ZONE, feed.options.days ?? settings.defaultDays);
  const { team, members } = await store.forTeam(feed.teamId ?? '', window);
  return {
    team,
    members: members.map((member): TeamMemberTime => {
      const included = includedEventIds(member.eventTypes, null);
      const slots = [...member.slots, ...member.slotsAround].filter((slot) => included.has(slot.eventId));
      return {
        id: member.id,
        name: memberName(member.displayName),
        blocks: usableFreeBlocks({ eventTypes: member.eventTypes, slots }),
      };
    }),
    windowStart: window.windowStart,
    windowEnd: window.windowEnd,
    windowKey: window.windowKey,
  };
}
