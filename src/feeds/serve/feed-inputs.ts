// The one declaration of what a feed's bytes depend on besides its slots and event types. Everything that
// must agree with it is derived from it or tested against it:
// - the render cache key (feedCacheKey below) holds every declared column;
// - the triggers of the feed_views migration watch exactly the declared columns (a change to one moves the
//   feed version and notifies the web role): test/feeds/feed-inputs-drift.test.ts reads them from Postgres;
// - the calendar's name and description read only declared columns (the same test watches what they read).
// Slots and event types reach the bytes through feedVersion, which every writer of them moves.
// A team feed depends on its team's declared columns (FEED_TEAM_INPUTS) and on every member's declared
// connection columns: the team_feeds migration's triggers notify the team's id when the team or its
// membership changes, and each member's own notices cover the rest.
import type { Prisma } from '../../generated/prisma/client.js';
import { feedOptionsKey } from '../feed-options.js';
import type { FeedRecord } from '../../store/feeds.js';

export const FEED_CONNECTION_INPUTS = {
  id: true,
  displayName: true,
  email: true,
  timezone: true,
  status: true,
  /** Moves whenever anything a feed shows changed: slots, event types, or one of the columns above. */
  feedVersion: true,
  /** When feedVersion last moved. */
  feedChangedAt: true,
} as const satisfies Prisma.ConnectionSelect;

export type FeedConnectionState = Prisma.ConnectionGetPayload<{ select: typeof FEED_CONNECTION_INPUTS }>;

/** A team's columns a team feed shows or depends on, and its members (by connection id, a fixed order). */
export const FEED_TEAM_INPUTS = {
  id: true,
  name: true,
  /** Moved by a trigger whenever a member joins or leaves. */
  membersChangedAt: true,
  members: {
    select: { connection: { select: FEED_CONNECTION_INPUTS } },
    orderBy: { connectionId: 'asc' },
  },
} as const satisfies Prisma.TeamSelect;

export interface FeedTeamState {
  id: string;
  name: string;
  membersChangedAt: Date;
  members: FeedConnectionState[];
}

export function teamStateOf(row: Prisma.TeamGetPayload<{ select: typeof FEED_TEAM_INPUTS }>): FeedTeamState {
  return {
    id: row.id,
    name: row.name,
    membersChangedAt: row.membersChangedAt,
    members: row.members.map((m) => m.connection),
  };
}

export const FEED_CONNECTION_INPUT_NAMES = Object.keys(
  FEED_CONNECTION_INPUTS,
) as (keyof FeedConnectionState)[];

/**
 * Everything a render depends on: the feed and its resolved options, each declared connection column, and the
 * window's first local day (the window moves at midnight in the account's zone with no write at all).
 */
export function feedCacheKey(
  feed: Pick<FeedRecord, 'id' | 'upstreamEventId' | 'options'>,
  connection: FeedConnectionState,
  windowKey: string,
  defaultDays: number,
): string {
  const options = feedOptionsKey({ ...feed.options, days: feed.options.days ?? defaultDays });
  return JSON.stringify([
    feed.id,
    feed.upstreamEventId,
    options,
    windowKey,
    ...FEED_CONNECTION_INPUT_NAMES.map((name) => connection[name]),
  ]);
}

// A team's part of the key, per resolved team state: the token lookup hands the same object to every poll until
// a notice makes it forget, and ten members' columns are most of the work of a cached request.
const teamKeyParts = new WeakMap<FeedTeamState, string>();

/** The same for a team feed: the team's declared columns and each member's, in the members' fixed order. */
export function teamFeedCacheKey(
  feed: Pick<FeedRecord, 'id' | 'options'>,
  team: FeedTeamState,
  windowKey: string,
  defaultDays: number,
): string {
  let teamPart = teamKeyParts.get(team);
  if (teamPart === undefined) {
    teamPart = JSON.stringify([
      team.id,
      team.name,
      team.membersChangedAt,
      ...team.members.map((member) => FEED_CONNECTION_INPUT_NAMES.map((name) => member[name])),
    ]);
    teamKeyParts.set(team, teamPart);
  }
  const options = feedOptionsKey({ ...feed.options, days: feed.options.days ?? defaultDays });
  return JSON.stringify([feed.id, options, windowKey, teamPart]);
}

/**
 * Last-Modified: the latest of the inputs that can change the bytes. feedChangedAt covers data, names and
 * status (see above), the feed's creation a connection never synced; the window's start covers midnight.
 * A client that sends only If-Modified-Since therefore never gets 304 for changed bytes.
 */
export function feedLastModified(
  feed: Pick<FeedRecord, 'createdAt'>,
  connection: Pick<FeedConnectionState, 'feedChangedAt'>,
  windowStart: Date,
): Date {
  const changedAt = connection.feedChangedAt ?? feed.createdAt;
  return changedAt.getTime() >= windowStart.getTime() ? changedAt : windowStart;
}

/** A team feed's Last-Modified: the latest member's change, the last membership change, or midnight. */
export function teamFeedLastModified(
  feed: Pick<FeedRecord, 'createdAt'>,
  team: Pick<FeedTeamState, 'membersChangedAt' | 'members'>,
  windowStart: Date,
): Date {
  const times = [
    feed.createdAt,
    team.membersChangedAt,
    windowStart,
    ...team.members.flatMap((m) => (m.feedChangedAt ? [m.feedChangedAt] : [])),
  ];
  return new Date(Math.max(...times.map((t) => t.getTime())));
}
