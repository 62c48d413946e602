// What a credential may read through the JSON API, decided in one place (scopeOf) and applied the same way by
// every route. An API key reads everything of the connections and teams it is scoped to, and chooses the event
// type (a secret one by naming it), the team's mode and minimum, and any range. A feed's token reads exactly
// what its feed shows: its connection or team, its event types (never a secret one the feed does not name,
// never a disabled one), the parts of an answer its view shows, its team mode and minimum, and only the days
// the feed shows. Anything outside the scope is answered as if it did not exist (404), so a credential cannot
// probe for ids.
import {
  DEFAULT_TEAM_MINIMUM_MINUTES,
  DEFAULT_TEAM_MODE,
  showsBusy,
  showsFree,
  viewOf,
  type FeedView,
  type TeamMode,
} from '../../feeds/feed-options.js';
import { includedEventIds } from '../../feeds/feed-model.js';
import { feedRowChangedAt } from '../../serving/feed-validators.js';
import { HttpError } from '../http-error.js';
import type { ApiAccess } from './api-access.js';

export const NOT_IN_SCOPE = 'No such connection or team, or this credential may not read it.';

/** Which parts of a connection's availability answer a credential may fill. */
export interface AnswerParts {
  free: boolean;
  slots: boolean;
  busy: boolean;
}

export interface TeamView {
  mode: TeamMode;
  /** Mode all only. */
  minimumMinutes: number | null;
}

export interface EventTypeState {
  id: string;
  enabled: boolean;
  secret: boolean;
}

export interface ApiScope {
  connectionIds: ReadonlySet<string>;
  teamIds: ReadonlySet<string>;
  /** Of a connection's current event types, those the credential may see (and list). */
  seenEventTypes(current: readonly EventTypeState[]): Set<string>;
  /** The event type a read uses (null: every one a default feed shows); 404 for one outside the scope. */
  eventTypeFor(asked: string | undefined, current: readonly EventTypeState[]): string | null;
  parts: AnswerParts;
  /** The team's mode and minimum a read uses; 404 for a choice the credential may not make. */
  teamViewFor(asked: { mode?: TeamMode | undefined; minimum?: number | undefined }): TeamView;
  /** The days from today a read is cut to (the feed's), or null for any range. */
  days: number | null;
  /**
   * When what this credential may read last changed (a feed's options or event type), or null when only the
   * data moves it: part of every answer's Last-Modified, so an If-Modified-Since client of a feed's token
   * gets the new view, not 304.
   */
  changedAt: Date | null;
}

/** Free blocks are the slots' union, so a view of slots may have both; busy time only where the view shows it. */
const partsOf = (view: FeedView): AnswerParts => ({
  free: showsFree(view) || view === 'slots',
  slots: view === 'slots',
  busy: showsBusy(view),
});

function noSuchEventType(id: string): HttpError {
  return new HttpError(
    404,
    `No event type ${JSON.stringify(id)} on this connection, or this credential may not read it.`,
  );
}

export function scopeOf(access: ApiAccess, settings: { feedDefaultDays: number }): ApiScope {
  if (access.kind === 'key') {
    const { key } = access;
    return {
      connectionIds: new Set(key.connectionIds),
      teamIds: new Set(key.teamIds),
      seenEventTypes: (current) => new Set(current.map((e) => e.id)),
      eventTypeFor(asked, current) {
        if (asked === undefined) return null;
        if (!current.some((e) => e.id === asked)) throw noSuchEventType(asked);
        return asked;
      },
      parts: { free: true, slots: true, busy: true },
      teamViewFor({ mode = DEFAULT_TEAM_MODE, minimum }) {
        return { mode, minimumMinutes: mode === 'all' ? (minimum ?? DEFAULT_TEAM_MINIMUM_MINUTES) : null };
      },
      days: null,
      // A key's scope is fixed when it is made: a new scope is a new key.
      changedAt: null,
    };
  }
  const { feed } = access;
  const named = feed.upstreamEventId;
  const own: TeamView | undefined =
    feed.options.mode === undefined
      ? undefined
      : {
          mode: feed.options.mode,
          minimumMinutes:
            feed.options.mode === 'all' ? (feed.options.minimum ?? DEFAULT_TEAM_MINIMUM_MINUTES) : null,
        };
  const shown = (current: readonly EventTypeState[]) =>
    includedEventIds(new Map(current.map((e) => [e.id, e])), named);
  return {
    connectionIds: new Set(feed.connectionId === null ? [] : [feed.connectionId]),
    teamIds: new Set(feed.teamId === null ? [] : [feed.teamId]),
    seenEventTypes: shown,
    eventTypeFor(asked, current) {
      // Its own event type stays readable when disabled since: the answer is then empty, as the feed is.
      if (asked === undefined || asked === named) return named;
      if (!shown(current).has(asked)) throw noSuchEventType(asked);
      return asked;
    },
    parts: partsOf(viewOf(feed.options)),
    teamViewFor(asked) {
      const chosen =
        (asked.mode !== undefined && asked.mode !== own?.mode) ||
        (asked.minimum !== undefined && asked.minimum !== own?.minimumMinutes);
      if (own === undefined || chosen) {
        throw new HttpError(
          404,
          own === undefined
            ? NOT_IN_SCOPE
            : `This feed's token reads its feed's team view (mode ${own.mode}${own.minimumMinutes === null ? '' : `, minimum ${own.minimumMinutes}`}): only an API key chooses mode and minimum.`,
        );
      }
      return own;
    },
    days: feed.options.days ?? settings.feedDefaultDays,
    changedAt: feedRowChangedAt(feed),
  };
}
