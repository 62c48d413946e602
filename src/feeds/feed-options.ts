// A feed's options, stored as JSON on its row. Strict: an unknown key is a mistake (a typo in the CLI or the
// admin form), not something to carry along silently.
import { z } from 'zod';

/**
 * What a feed's events are:
 * - `free`: the person's free time, the open slots of every included event type merged into maximal blocks,
 *   one event per block. What a colleague subscribing wants: when this person is free, once.
 * - `slots`: bookable starts, one event per slot and event type (`merge` joins one event type's slots).
 * - `busy`: the inferred bookings as opaque "Busy" blocks, what availability-only calendar publishing shows.
 * - `free+busy`: both.
 */
export const FEED_VIEWS = ['free', 'slots', 'busy', 'free+busy'] as const;
export type FeedView = (typeof FEED_VIEWS)[number];
export const DEFAULT_FEED_VIEW: FeedView = 'free';
export const DEFAULT_FREE_SUMMARY = 'Free';

/**
 * What a team feed shows (src/feeds/team-availability.ts):
 * - `all`: the times when every member is free, pieces shorter than `minimum` minutes dropped;
 * - `any`: the times when at least one member is free, naming who.
 */
export const TEAM_MODES = ['all', 'any'] as const;
export type TeamMode = (typeof TEAM_MODES)[number];
export const DEFAULT_TEAM_MODE: TeamMode = 'all';
/** A meeting of everyone needs at least this long together, unless the feed says otherwise. */
export const DEFAULT_TEAM_MINIMUM_MINUTES = 30;

/** Days a feed may show, and minutes a team feed's minimum may be: the forms and the CLI take the same bounds. */
export const FEED_DAYS_MAX = 366;
export const TEAM_MINIMUM_MAX_MINUTES = 1440;

/**
 * A minimum with a mode other than `all` means nothing: the one rule the feed store (so the CLI and the forms)
 * and the JSON API's team query all refuse a minimum by, in these words.
 */
export function minimumConflict(mode: TeamMode | undefined, minimum: number | undefined): string | undefined {
  return minimum !== undefined && mode !== 'all'
    ? 'minimum applies to team feeds in mode all (when everyone is free)'
    : undefined;
}

export const feedOptionsSchema = z.strictObject({
  /** Absent on rows written before views existed: those are converted by a migration, so absent means free. */
  view: z.enum(FEED_VIEWS).optional(),
  /** Days shown from the start of today in the account's zone; a leap year's worth at most. */
  days: z.number().int().min(1).max(FEED_DAYS_MAX).optional(),
  /** `slots` view: join adjacent or overlapping slots of one event type into one block. */
  merge: z.boolean().optional(),
  /** `free` view: the SUMMARY of every block ("Free" when unset). */
  summary: z.string().trim().min(1).max(100).optional(),
  /** Team feeds only, and always: whose free time they show. */
  mode: z.enum(TEAM_MODES).optional(),
  /** Team feeds in mode `all`: the shortest time together worth showing, in minutes. */
  minimum: z.number().int().min(1).max(TEAM_MINIMUM_MAX_MINUTES).optional(),
});

export type FeedOptions = {
  view?: FeedView;
  days?: number;
  merge?: boolean;
  summary?: string;
  mode?: TeamMode;
  minimum?: number;
};

/** A team feed's options carry its mode; a connection's feed has none. */
export const isTeamOptions = (o: FeedOptions): boolean => o.mode !== undefined;

export const viewOf = (o: FeedOptions): FeedView => o.view ?? DEFAULT_FEED_VIEW;

/** A view as lists and summaries name it. */
export const VIEW_NAMES: Record<FeedView, string> = {
  free: 'free time',
  slots: 'slots',
  busy: 'busy time',
  'free+busy': 'free and busy time',
};

/** Whether a view shows blocks of free time (titled by `summary`), and whether it shows busy time. */
export const showsFree = (view: FeedView): boolean => view === 'free' || view === 'free+busy';
export const showsBusy = (view: FeedView): boolean => view === 'busy' || view === 'free+busy';

/**
 * A canonical key for render caches: equal for options that render alike (`{}` and `{ view: 'free' }`).
 * An unset day range reads "d-": callers that want the configured default in the key pass resolved options,
 * e.g. `{ ...options, days: options.days ?? defaultDays }`.
 */
export function feedOptionsKey(o: FeedOptions): string {
  const view = viewOf(o);
  const shape = showsFree(view)
    ? `s${JSON.stringify(o.summary ?? DEFAULT_FREE_SUMMARY)}`
    : view === 'slots'
      ? `m${o.merge ? 1 : 0}`
      : '';
  const team =
    o.mode === undefined
      ? ''
      : `;t${o.mode}${o.mode === 'all' ? (o.minimum ?? DEFAULT_TEAM_MINIMUM_MINUTES) : ''}`;
  return `${view};d${o.days ?? '-'};${shape}${team}`;
}

/** Only the keys that matter for the view, view always stated, so stored rows compare equal. */
export function normalizeFeedOptions(o: FeedOptions): FeedOptions {
  if (o.mode !== undefined) {
    return {
      view: 'free',
      mode: o.mode,
      ...(o.mode === 'all' ? { minimum: o.minimum ?? DEFAULT_TEAM_MINIMUM_MINUTES } : {}),
      ...(o.days !== undefined ? { days: o.days } : {}),
      ...(o.summary !== undefined ? { summary: o.summary } : {}),
    };
  }
  const view = viewOf(o);
  return {
    view,
    ...(o.days !== undefined ? { days: o.days } : {}),
    ...(view === 'slots' && o.merge !== undefined ? { merge: o.merge } : {}),
    ...(showsFree(view) && o.summary !== undefined ? { summary: o.summary } : {}),
  };
}

/** Options that only make sense for the other view are a mistake the caller should hear about. */
export function optionsConflict(o: FeedOptions): string | undefined {
  const view = viewOf(o);
  if (o.mode !== undefined && view !== 'free') return 'a team feed shows free time (view free)';
  const minimum = minimumConflict(o.mode, o.minimum);
  if (minimum !== undefined) return minimum;
  if (view !== 'slots' && o.merge !== undefined)
    return 'merge applies to the slots view only (free and busy time are always merged)';
  if (!showsFree(view) && o.summary !== undefined)
    return 'summary applies to the views of free time only (free, free+busy)';
  return undefined;
}

/** A team feed's options as lists show them: "everyone free, at least 30 min; 28 days". */
export function describeTeamFeedOptions(o: FeedOptions): string {
  const mode =
    o.mode === 'any'
      ? 'who is free'
      : `everyone free, at least ${o.minimum ?? DEFAULT_TEAM_MINIMUM_MINUTES} min`;
  const days = o.days === undefined ? 'default days' : `${o.days} days`;
  const summary = o.summary === undefined ? '' : `; “${o.summary}”`;
  return `${mode}; ${days}${summary}`;
}
