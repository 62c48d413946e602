// The service pages and commands use for CalDAV destinations: add one (its calendar found by name on the server,
// or made there), list them and their log, remove one (a worker deletes its events after it), replace refused
// credentials, pause and resume, and ask for a push or a reconciliation now; and the cleanups ended destinations
// left, with what a person can do about one stuck on refused credentials. Every server failure is one of the
// CalDAV client's typed errors (src/caldav/errors.ts), whose messages name no secret; the password is never
// returned.
import type { CaldavCleanupRecord, CaldavCleanupStore } from '../store/caldav-cleanups.js';
import {
  duePush,
  type CaldavDestinationRecord,
  type CaldavDestinationStore,
  type DestinationLogEntry,
  type DuePush,
} from '../store/caldav-destinations.js';
import { FeedNotFoundError, type FeedStore } from '../store/feeds.js';
import type { CalendarAccount, CalendarInfo, OpenCalendarAccount } from './calendar-port.js';

/** The calendar a destination writes into when its adder names none. */
export const DEFAULT_CALENDAR_NAME = 'Free time (slotfeed)';

export class InvalidDestinationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidDestinationError';
  }
}

/** Asked to push a destination that is paused or whose credentials were refused. */
export class DestinationNotPushableError extends Error {
  constructor(
    readonly destinationId: string,
    readonly state: CaldavDestinationRecord['state'],
  ) {
    super(
      state === 'paused'
        ? `CalDAV destination ${destinationId} is paused: resume it first`
        : `CalDAV destination ${destinationId} had its credentials refused: replace them first`,
    );
    this.name = 'DestinationNotPushableError';
  }
}

export interface CaldavDestinationsDeps {
  destinations: CaldavDestinationStore;
  cleanups: CaldavCleanupStore;
  feeds: Pick<FeedStore, 'get'>;
  openAccount: OpenCalendarAccount;
  /** Queues a push of each destination (the caldav queue; one per destination), naming its host. */
  enqueue(pushes: DuePush[]): Promise<void>;
  /** Queues the cleanup of each ended destination (the same queue, under the destination's lock). */
  enqueueCleanup(destinationIds: string[]): Promise<void>;
  now: () => Date;
}

/** What a removal leaves to do in the calendar. */
export interface Removal {
  /** Events slotfeed recorded writing there, which a worker deletes now; 0 when asked to keep them. */
  eventsToDelete: number;
  keptEvents: boolean;
}

export interface AddDestinationInput {
  feedId: string;
  /** The server's address (https://caldav.example.com/), or one calendar's own URL. */
  serverUrl: string;
  username: string;
  password: string;
  /** The calendar to write into, by its name: used when the server has one, made when not. */
  calendarName?: string;
}

export interface CaldavDestinations {
  /**
   * Checks the credentials on the server, finds or makes the calendar, stores the destination and queues its
   * first push (a reconciliation: it writes the whole feed). Throws InvalidDestinationError, FeedNotFoundError,
   * CalendarTakenError, and the client's CalDavCredentialsError, CalDavTargetError, CalDavNotSupportedError,
   * CalDavUnreachableError … as the server answers.
   */
  add(input: AddDestinationInput): Promise<CaldavDestinationRecord>;
  list(filter?: {
    feedId?: string;
    connectionId?: string;
    teamId?: string;
  }): Promise<CaldavDestinationRecord[]>;
  /** Throws CaldavDestinationNotFoundError. */
  get(destinationId: string): Promise<CaldavDestinationRecord>;
  /** The destination's latest log entries, newest first. */
  log(destinationId: string, limit?: number): Promise<DestinationLogEntry[]>;
  /**
   * Removes the destination at once; unless `keepEvents`, a worker then deletes the events slotfeed wrote into the
   * calendar (those it can prove it wrote: a person's own events and copies stay), retried until done or the
   * credentials are refused (then listed by `cleanups` for someone to act on).
   */
  remove(destinationId: string, options?: { keepEvents?: boolean }): Promise<Removal>;
  /** Ended destinations whose events are still being deleted from their calendars. */
  cleanups(filter?: { connectionId?: string; teamId?: string }): Promise<CaldavCleanupRecord[]>;
  /** One of them; null when it is done (or never was). */
  cleanup(id: string): Promise<CaldavCleanupRecord | null>;
  /** The one still under way in that calendar (a destination there waits for it); null when none is. */
  cleanupAt(calendarUrl: string): Promise<CaldavCleanupRecord | null>;
  /** New credentials for a cleanup the server refused: checked on the server, then tried again at once. */
  replaceCleanupCredentials(id: string, credentials: { username: string; password: string }): Promise<void>;
  /** The person deletes the events themselves (or keeps them): the cleanup ends without touching the calendar. */
  abandonCleanup(id: string): Promise<void>;
  /**
   * Checks the new credentials on the server, then keeps them sealed: the destination is active again (a
   * paused one stays paused) and pushed and reconciled at once. Throws CalDavCredentialsError when refused.
   */
  replaceCredentials(
    destinationId: string,
    credentials: { username: string; password: string },
  ): Promise<CaldavDestinationRecord>;
  /** Paused: nothing is pushed until resumed; resuming pushes at once. */
  setPaused(destinationId: string, paused: boolean): Promise<CaldavDestinationRecord>;
  /** A push now, out of any backoff. Throws DestinationNotPushableError when paused or needing credentials. */
  pushNow(destinationId: string): Promise<CaldavDestinationRecord>;
  /** A reconciliation now (also repairs edits and deletions in the calendar). Same refusals as pushNow. */
  reconcileNow(destinationId: string): Promise<CaldavDestinationRecord>;
}

function required(value: string, what: string): string {
  if (value.trim() === '') throw new InvalidDestinationError(`${what} is required`);
  return value;
}

/** HTTP Basic authentication (RFC 7617) cannot carry a user name with a colon: it ends the name. */
function userName(value: string): string {
  const name = required(value, 'a user name');
  if (name.includes(':')) throw new InvalidDestinationError('a user name cannot contain ":"');
  return name;
}

/** Said when the calendar found is on another server than the one typed. */
export function movedMessage(serverUrl: string, calendarUrl: string): string {
  return (
    `${new URL(serverUrl).host} sent slotfeed on to ${new URL(calendarUrl).host}: the calendar is ${calendarUrl}. ` +
    'Paused until you resume it, so that nothing is written there before you have seen where'
  );
}

/**
 * Said when a destination is added to a calendar an ended destination's cleanup is still deleting from: the same
 * UIDs and proofs, so the new one writes nothing there until it is done.
 */
export function waitingMessage(cleanup: Pick<CaldavCleanupRecord, 'state'>): string {
  return (
    'This destination waits until slotfeed has deleted the events of the destination removed from this calendar, ' +
    'then writes the whole feed there' +
    (cleanup.state === 'needs_credentials'
      ? ': that cleanup needs new credentials (give them to it, or leave its events there)'
      : '')
  );
}

/** The calendar named `name` that takes events, else a new one; an account opened on one calendar uses it. */
async function calendarFor(account: CalendarAccount, name: string): Promise<CalendarInfo> {
  const calendars = await account.listCalendars();
  if (account.calendarUrl !== undefined) {
    const only = calendars.find((calendar) => calendar.url === account.calendarUrl);
    if (only && !only.acceptsEvents)
      throw new InvalidDestinationError(`the calendar ${only.url} does not take events`);
    if (only) return only;
  }
  const named = calendars.find((calendar) => calendar.displayName === name && calendar.acceptsEvents);
  return named ?? account.makeCalendar({ displayName: name });
}

export function createCaldavDestinations(deps: CaldavDestinationsDeps): CaldavDestinations {
  const { destinations } = deps;

  const pushable = async (destinationId: string) => {
    const destination = await destinations.get(destinationId);
    if (destination.state === 'paused' || destination.state === 'needs_credentials')
      throw new DestinationNotPushableError(destinationId, destination.state);
    return destination;
  };

  /**
   * Resuming a destination paused because its calendar was deleted on the server makes the calendar again, at the
   * same URL, under the same name: the person asked for it by resuming.
   */
  const calendarAgainIfGone = async (destinationId: string) => {
    const destination = await destinations.get(destinationId);
    if (destination.state !== 'paused') return;
    const credentials = await destinations.credentialsOf(destinationId);
    const account = await deps.openAccount({ serverUrl: destination.serverUrl, ...credentials });
    if (await account.calendarExists(destination.calendarUrl)) return;
    const segment = decodeURIComponent(
      new URL(destination.calendarUrl).pathname.split('/').filter(Boolean).at(-1) ?? '',
    );
    const made = await account.makeCalendar({ displayName: destination.calendarName, segment });
    if (made.url !== destination.calendarUrl)
      throw new InvalidDestinationError(
        `the calendar ${destination.calendarUrl} could not be made again there: remove this destination and add another`,
      );
  };

  return {
    async add(input) {
      const username = userName(input.username);
      const password = required(input.password, 'a password');
      const serverUrl = required(input.serverUrl, 'the server’s address').trim();
      const calendarName = input.calendarName?.trim() || DEFAULT_CALENDAR_NAME;
      const feed = await deps.feeds.get(input.feedId);
      if (feed.revokedAt !== null) throw new FeedNotFoundError(feed.id, `feed ${feed.id} is revoked`);

      const account = await deps.openAccount({ serverUrl, username, password });
      const calendar = await calendarFor(account, calendarName);
      const added = await destinations.create(
        {
          feedId: feed.id,
          serverUrl,
          calendarUrl: calendar.url,
          calendarName: calendar.displayName,
          credentials: { username, password },
        },
        deps.now(),
      );
      if (new URL(calendar.url).origin !== new URL(serverUrl).origin) {
        // Discovery led to another server of the same site (credentialScope): nothing is written there until the
        // person has seen where and resumed it.
        const held = await destinations.setPaused(added.id, true, deps.now());
        await destinations.log(
          added.id,
          [{ kind: 'confirm', uid: null, message: movedMessage(serverUrl, calendar.url) }],
          deps.now(),
        );
        return held;
      }
      const cleanup = await deps.cleanups.atCalendar(calendar.url);
      if (cleanup !== null) {
        await destinations.log(
          added.id,
          [{ kind: 'waiting', uid: null, message: waitingMessage(cleanup) }],
          deps.now(),
        );
        // Pushed once the cleanup has ended (the dispatcher brings it): nothing to queue now.
        return added;
      }
      // Queued for a first push at once; if the queue cannot take it (Redis down), the destination is stored
      // as due (its whole feed pending) and the dispatcher, which reads Postgres, queues it once Redis is back.
      await deps.enqueue([duePush(added)]).catch(() => undefined);
      return added;
    },

    list: (filter) => destinations.list(filter),
    get: (destinationId) => destinations.get(destinationId),
    log: (destinationId, limit) => destinations.logOf(destinationId, limit),

    async remove(destinationId, options = {}) {
      const keepEvents = options.keepEvents ?? false;
      await destinations.retire(destinationId, {
        keepEvents,
        reason: 'the destination was removed',
        now: deps.now(),
      });
      if (keepEvents) return { eventsToDelete: 0, keptEvents: true };
      const cleanup = await deps.cleanups.find(destinationId);
      // Queued now; if the queue cannot take it, the cleanup is due in Postgres and the dispatcher queues it.
      await deps.enqueueCleanup([destinationId]).catch(() => undefined);
      return { eventsToDelete: cleanup?.events.length ?? 0, keptEvents: false };
    },

    cleanups: (filter) => deps.cleanups.list(filter),
    cleanup: (id) => deps.cleanups.find(id),
    cleanupAt: (calendarUrl) => deps.cleanups.atCalendar(calendarUrl),

    async replaceCleanupCredentials(id, credentials) {
      const username = userName(credentials.username);
      const password = required(credentials.password, 'a password');
      const cleanup = await deps.cleanups.find(id);
      if (cleanup === null) throw new InvalidDestinationError('that calendar’s cleanup is done already');
      const account = await deps.openAccount({ serverUrl: cleanup.calendarUrl, username, password });
      await account.listFeedEvents(cleanup.calendarUrl, cleanup.feedId);
      await deps.cleanups.replaceCredentials(id, { username, password });
      await deps.enqueueCleanup([id]).catch(() => undefined);
    },

    async abandonCleanup(id) {
      await deps.cleanups.done(id, deps.now());
    },

    async replaceCredentials(destinationId, credentials) {
      const username = userName(credentials.username);
      const password = required(credentials.password, 'a password');
      const destination = await destinations.get(destinationId);
      // Refused again: nothing changes, and the caller says so.
      const account = await deps.openAccount({ serverUrl: destination.calendarUrl, username, password });
      await account.listFeedEvents(destination.calendarUrl, destination.feedId);
      const replaced = await destinations.replaceCredentials(
        destinationId,
        { username, password },
        deps.now(),
      );
      await destinations.log(
        destinationId,
        [{ kind: 'credentials', uid: null, message: 'credentials replaced' }],
        deps.now(),
      );
      if (replaced.state === 'active') await deps.enqueue([duePush(replaced)]);
      return replaced;
    },

    async setPaused(destinationId, paused) {
      if (!paused) await calendarAgainIfGone(destinationId);
      const updated = await destinations.setPaused(destinationId, paused, deps.now());
      if (!paused && updated.state === 'active') await deps.enqueue([duePush(updated)]);
      return updated;
    },

    async pushNow(destinationId) {
      await pushable(destinationId);
      const updated = await destinations.requestPush(destinationId, deps.now());
      await deps.enqueue([duePush(updated)]);
      return updated;
    },

    async reconcileNow(destinationId) {
      await pushable(destinationId);
      const updated = await destinations.requestReconcile(destinationId, deps.now());
      await deps.enqueue([duePush(updated)]);
      return updated;
    },
  };
}
