// What the declared inputs of a feed (feeds/feed-inputs.ts) decide when it is served: the render cache key,
// which holds every declared column, and Last-Modified, the latest of the declared change times.
import {
  FEED_CONNECTION_INPUT_NAMES,
  FEED_ROW_INPUT_NAMES,
  type FeedConnectionState,
  type FeedRowInputName,
  type FeedTeamState,
} from '../feeds/feed-inputs.js';
import { feedOptionsKey } from '../feeds/feed-options.js';
import type { FeedRecord } from '../store/feeds.js';

/** A feed's row as its cache keys and Last-Modified read it: its declared columns and when they changed. */
type FeedInputs = Pick<FeedRecord, 'id' | FeedRowInputName | 'inputsChangedAt'>;

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
