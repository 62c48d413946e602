// The one declaration of what a feed's bytes depend on besides its slots and event types. Everything that
// must agree with it is derived from it or tested against it:
// - the render cache key (feedCacheKey below) holds every declared column;
// - Last-Modified (feedLastModified below) is the latest of the declared change times;
// - the triggers of the feed_views migration watch exactly the declared connection columns, and the trigger of
//   the feed_inputs_changed_at migration exactly the declared feed columns (a change to one moves a change time
//   and notifies the web role): test/store/feed-inputs-drift.test.ts reads them from Postgres, and changes
//   every feed option there to see Last-Modified and the cache key move;
// - the calendar's name and description read only declared columns (the same test watches what they read).
// Slots and event types reach the bytes through feedVersion, which every writer of them moves.
// A team feed depends on its team's declared columns (FEED_TEAM_INPUTS) and on every member's declared
// connection columns: the team_feeds migration's triggers notify the team's id when the team or its
// membership changes, and each member's own notices cover the rest.
import type { Prisma } from '../generated/prisma/client.js';
import { feedOptionsKey } from '../feeds/feed-options.js';
import type { FeedRecord } from '../store/feeds.js';

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

/**
 * The feed row's own columns that change what it shows: its options (view, days, merge, summary, a team's mode
 * and minimum) and the event type it names. A change to one moves inputsChangedAt, whoever writes it.
 */
export const FEED_ROW_INPUTS = {
  options: true,
  upstreamEventId: true,
} as const satisfies Prisma.FeedSelect;

export const FEED_ROW_INPUT_NAMES = Object.keys(FEED_ROW_INPUTS) as (keyof typeof FEED_ROW_INPUTS)[];

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

/** A feed's row as its cache keys and Last-Modified read it: its declared columns and when they changed. */
type FeedInputs = Pick<FeedRecord, 'id' | keyof typeof FEED_ROW_INPUTS | 'inputsChangedAt'>;

/**
 * The feed's part of a cache key: each declared column (the options resolved, so `{}` and the defaults they
 * stand for agree) and inputsChangedAt, since options changed and changed back render the same bytes but
 * under a later Last-Modified than the ones cached before.
 */
function feedKeyPart(feed: FeedInputs, defaultDays: number): unknown[] {
  const declared = FEED_ROW_INPUT_NAMES.map((name) =>
    name === 'options'
      ? feedOptionsKey({ ...feed.options, days: feed.options.days ?? defaultDays })
      : feed[name],
  );
  return [feed.id, ...declared, feed.inputsChangedAt];
}

/**
 * Everything a render depends on: the feed's declared columns, each declared connection column, and the
 * window's first local day (the window moves at midnight in the account's zone with no write at all).
 */
export function feedCacheKey(
  feed: FeedInputs,
  connection: FeedConnectionState,
  windowKey: string,
  defaultDays: number,
): string {
  return JSON.stringify([
    ...feedKeyPart(feed, defaultDays),
    windowKey,
    ...FEED_CONNECTION_INPUT_NAMES.map((name) => connection[name]),
  ]);
}

// A team's part of the key, per resolved team state: the token lookup hands the same object to every poll until
// a notice makes it forget, and ten members' columns are most of the work of a cached request.
const teamKeyParts = new WeakMap<FeedTeamState, string>();

/** The same for a team feed: the team's declared columns and each member's, in the members' fixed order. */
export function teamFeedCacheKey(
  feed: FeedInputs,
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
  return JSON.stringify([...feedKeyPart(feed, defaultDays), windowKey, teamPart]);
}

/** The latest of some instants; an absent one (a change that never happened) counts for nothing. */
const latest = (times: readonly (Date | null)[]): Date =>
  new Date(Math.max(...times.flatMap((t) => (t === null ? [] : [t.getTime()]))));

/** When the feed row last changed what it shows: made, or its options or event type changed since. */
export function feedRowChangedAt(feed: Pick<FeedRecord, 'createdAt' | 'inputsChangedAt'>): Date {
  return latest([feed.createdAt, feed.inputsChangedAt]);
}

/**
 * Last-Modified: the latest of the inputs that can change the bytes. feedChangedAt covers data, names and
 * status (see above), the feed's creation a connection never synced; inputsChangedAt covers the feed's own
 * options and event type; the window's start covers midnight. A client that sends only If-Modified-Since
 * therefore never gets 304 for changed bytes.
 */
export function feedLastModified(
  feed: Pick<FeedRecord, 'createdAt' | 'inputsChangedAt'>,
  connection: Pick<FeedConnectionState, 'feedChangedAt'>,
  windowStart: Date,
): Date {
  return latest([connection.feedChangedAt ?? feed.createdAt, feed.inputsChangedAt, windowStart]);
}

/**
 * A team feed's Last-Modified: the latest member's change, the last membership change, the last change of the
 * feed's own options, or midnight.
 */
export function teamFeedLastModified(
  feed: Pick<FeedRecord, 'createdAt' | 'inputsChangedAt'>,
  team: Pick<FeedTeamState, 'membersChangedAt' | 'members'>,
  windowStart: Date,
): Date {
  return latest([
    feed.createdAt,
    feed.inputsChangedAt,
    team.membersChangedAt,
    windowStart,
    ...team.members.map((m) => m.feedChangedAt),
  ]);
}
