// The one declaration of what a feed's bytes depend on besides its slots and event types. Everything that
// must agree with it is derived from it or tested against it:
// - the store reads exactly the declared columns (store/feed-inputs.ts selects them; the compiler holds the
//   rows it reads to the types below);
// - the render cache key (serving/feed-validators.ts) holds every declared column;
// - Last-Modified (serving/feed-validators.ts) is the latest of the declared change times;
// - the triggers of the feed_views migration watch exactly the declared connection columns, and the trigger of
//   the feed_inputs_changed_at migration exactly the declared feed columns (a change to one moves a change time
//   and notifies the web role): test/store/feed-inputs-drift.test.ts reads them from Postgres, and changes
//   every feed option there to see Last-Modified and the cache key move;
// - the calendar's name and description (describe-feed.ts) read only declared columns (the same test watches
//   what they read).
// Slots and event types reach the bytes through feedVersion, which every writer of them moves.
// A team feed depends on its team's declared columns (FeedTeamState) and on every member's declared
// connection columns: the team_feeds migration's triggers notify the team's id when the team or its
// membership changes, and each member's own notices cover the rest.

/** A connection's columns that a feed of it shows or depends on. */
export interface FeedConnectionState {
  id: string;
  displayName: string | null;
  email: string | null;
  timezone: string | null;
  status: 'active' | 'needs_reauth' | 'disabled';
  /** Moves whenever anything a feed shows changed: slots, event types, or one of the columns above. */
  feedVersion: number;
  /** When feedVersion last moved. */
  feedChangedAt: Date | null;
}

/** The same columns by name, as the store selects them: its type lets no column be missing or extra. */
export const FEED_CONNECTION_INPUTS: { readonly [Name in keyof FeedConnectionState]: true } = {
  id: true,
  displayName: true,
  email: true,
  timezone: true,
  status: true,
  feedVersion: true,
  feedChangedAt: true,
};

export const FEED_CONNECTION_INPUT_NAMES = Object.keys(
  FEED_CONNECTION_INPUTS,
) as (keyof FeedConnectionState)[];

/**
 * The feed row's own columns that change what it shows: its options (view, days, merge, summary, a team's mode
 * and minimum) and the event type it names. A change to one moves inputsChangedAt, whoever writes it.
 */
export const FEED_ROW_INPUT_NAMES = ['options', 'upstreamEventId'] as const;

export type FeedRowInputName = (typeof FEED_ROW_INPUT_NAMES)[number];

/** A team's columns a team feed shows or depends on, and its members (by connection id, a fixed order). */
export interface FeedTeamState {
  id: string;
  name: string;
  /** Moved by a trigger whenever a member joins or leaves. */
  membersChangedAt: Date;
  members: FeedConnectionState[];
}
