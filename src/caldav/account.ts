// One person's CalDAV account, as slotfeed uses it: find the calendars, make one, and write, change, delete and list
// slotfeed's own events there, each change conditional on the ETag slotfeed last saw (RFC 4791 §5.3.4, RFC 9110
// §13), so a change the person or another device made in between is never overwritten unseen. Built on tsdav's
// requests and discovery; every request goes through guarded-fetch.ts (policy, credentials, time limit, typed errors).
import { randomUUID } from 'node:crypto';
import {
  createCalendarObject,
  davRequest,
  DAVNamespace,
  getDAVAttribute,
  deleteCalendarObject,
  makeCalendar,
  propfind,
  updateCalendarObject,
} from 'tsdav';
import { CalDavNotFoundError, CalDavNotSupportedError, CalDavRequestError } from './errors.js';
import { FEED_MARKER_PROPERTY, readEventIdentity } from './event-marker.js';
import {
  asCalDavError,
  CALENDAR_PROPS,
  calendarOf,
  isCalendar,
  textOf,
  withSlash,
  type CalDavCalendar,
} from './dav-properties.js';
import { locate } from './discovery.js';
import { guardedFetch } from './guarded-fetch.js';
import { nodeHttpTransport, type Fetch } from './http-transport.js';
import { checkedCalDavUrl, credentialScope } from './target-policy.js';

export const DEFAULT_CALDAV_TIMEOUT_MS = 20_000;
/** A calendar-query answer holds every event of the feed: generous, but bounded. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface CalDavAccountOptions {
  /**
   * The server's base URL, e.g. https://caldav.fastmail.com/ or https://cloud.example.com/remote.php/dav (found by
   * /.well-known/caldav → current-user-principal → calendar-home-set, RFC 6764 and 4791), or one calendar
   * collection's own URL (then that calendar is the only one, and none can be made). https; http only for a
   * private target when those are allowed. No user name or password in it.
   */
  serverUrl: string;
  username: string;
  password: string;
  /**
   * `serverUrl` is a calendar found before (a destination's): it is taken as it is, with no request to find it.
   * A push opens its account this way every time, so discovery's PROPFIND would double its requests; a calendar
   * gone since is found out by the first request that does not find it.
   */
  knownCalendar?: boolean | undefined;
  /** Each request's time limit; DEFAULT_CALDAV_TIMEOUT_MS when not given. */
  timeoutMs?: number | undefined;
  /** Private, loopback and link-local targets (and plain http to them): refused unless true (tests, the demo). */
  allowPrivateTargets?: boolean | undefined;
  /**
   * Replaces the HTTP transport (node:http(s) with the after-DNS check) for tests. The policy on each URL, the
   * time limit and the typed errors still apply; the after-DNS check is then this fetch's business. The time limit
   * ends with its answer (guarded-fetch.ts), so a body this fetch leaves to be read later is read without one.
   */
  fetch?: Fetch | undefined;
  /** Aborts the account's requests (shutdown); the abort's reason is thrown as it is. */
  signal?: AbortSignal | undefined;
  /** The clock a Retry-After HTTP date is read against. */
  now?: (() => Date) | undefined;
  /** Waited for before each request: the host's rate limit (destinations/host-limits.ts). */
  beforeRequest?: ((url: URL, signal?: AbortSignal) => Promise<void>) | undefined;
}

export type { CalDavCalendar } from './dav-properties.js';

/** An event as stored: where, and the ETag of the version slotfeed wrote or read. */
export interface CalDavStoredEvent {
  /** The event resource's absolute URL. */
  href: string;
  etag: string;
}

export interface CalDavFeedEvent extends CalDavStoredEvent {
  uid: string;
  /** The stored VCALENDAR text, as the server gives it. */
  icalendar: string;
  /** The event's proof (X-SLOTFEED-PROOF), when it carries one: whether it fits its UID is the caller's to check. */
  proof: string | undefined;
}

/** What a calendar-query found of one feed's events. */
export interface CalDavFeedListing {
  events: CalDavFeedEvent[];
  /**
   * False when the server said the answer is cut short (507 on the collection, RFC 4918 §11.5 / RFC 5323) or an
   * item could not be read (an item's 403, 5xx …): absence from `events` then proves nothing.
   */
  complete: boolean;
  /** Items the server answered with a failure, skipped: their href and status. */
  failedItems: { href: string; status: number }[];
}

export interface CalDavAccount {
  /** The calendar home (where makeCalendar makes one); undefined when opened on one calendar's own URL. */
  readonly homeUrl: string | undefined;
  /** The calendar the account was opened on, when opened on a calendar's own URL. */
  readonly calendarUrl: string | undefined;
  /** The calendars in the home (or the one it was opened on). */
  listCalendars(): Promise<CalDavCalendar[]>;
  /**
   * MKCALENDAR in the home, for events only. `segment` is the new collection's last path segment
   * ([A-Za-z0-9._-], default slotfeed-<random uuid>). CalDavNotSupportedError where the server refuses.
   */
  makeCalendar(input: { displayName: string; segment?: string }): Promise<CalDavCalendar>;
  /**
   * PUT a new event at <calendar>/<uid>.ics with If-None-Match: *: CalDavPreconditionError when it exists.
   * `icalendar` is one VCALENDAR with a VEVENT of this UID carrying the feed marker (event-marker.ts).
   */
  createEvent(calendarUrl: string, event: { uid: string; icalendar: string }): Promise<CalDavStoredEvent>;
  /** PUT with If-Match: the ETag last seen; CalDavPreconditionError when the event changed since. */
  updateEvent(event: { href: string; etag: string; icalendar: string }): Promise<CalDavStoredEvent>;
  /** DELETE with If-Match; CalDavPreconditionError when it changed since, CalDavNotFoundError when it is gone. */
  deleteEvent(event: { href: string; etag: string }): Promise<void>;
  /**
   * The calendar's events whose marker is exactly this feed's id, by a calendar-query REPORT (RFC 4791 §7.8)
   * filtered on the marker, each checked again here: CalDAV's text-match is a substring match, and a server might
   * ignore a filter. A person's own events are never in it (copies of slotfeed's aside: see the proof). Every good
   * item of the multistatus is read; a failed one is skipped and named, and makes the listing incomplete.
   * sync-collection (RFC 6578) is not used: slotfeed reads its own few events whole on each push, which needs no
   * sync token kept per calendar. CalDavNotFoundError when the calendar itself is gone.
   */
  listFeedEvents(calendarUrl: string, feedId: string): Promise<CalDavFeedListing>;
  /** Whether the calendar collection is still there (a 404 or 410 to PROPFIND: false). */
  calendarExists(calendarUrl: string): Promise<boolean>;
}

function requireEtag(etag: string): void {
  // tsdav drops an empty ETag, which would turn a conditional request into an unconditional one.
  if (etag.trim() === '')
    throw new TypeError('an ETag is required: changes are conditional on the last one seen');
}

function requireMarkedEvent(icalendar: string, uid?: string): void {
  const identity = readEventIdentity(icalendar);
  if (!identity) throw new TypeError('the iCalendar text holds no VEVENT with a UID');
  if (uid !== undefined && identity.uid !== uid) {
    throw new TypeError(`the VEVENT's UID is ${identity.uid}, not ${uid}`);
  }
  if (identity.feedId === undefined) {
    // Without the marker, slotfeed could never find the event again to change or remove it.
    throw new TypeError(`the VEVENT carries no ${FEED_MARKER_PROPERTY}`);
  }
}

/** Opens the account: checks the URL, finds the calendar home (or the calendar) and so the credentials too. */
export async function openCalDavAccount(options: CalDavAccountOptions): Promise<CalDavAccount> {
  if (options.username.includes(':')) {
    throw new TypeError('a CalDAV user name cannot contain a colon (Basic authentication cannot carry it)');
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_CALDAV_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError('timeoutMs is a positive number');
  const policy = { allowPrivateTargets: options.allowPrivateTargets ?? false };
  const server = checkedCalDavUrl(options.serverUrl, policy);
  const serverUrl = server.href;
  const mayCarryCredentials = credentialScope(server);
  const fetch = guardedFetch({
    mayCarryCredentials,
    transport: options.fetch ?? nodeHttpTransport({ ...policy, maxBodyBytes: MAX_BODY_BYTES }),
    policy,
    authorization: `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`,
    timeoutMs,
    signal: options.signal,
    beforeRequest: options.beforeRequest,
    now: options.now ?? (() => new Date()),
  });

  const propfindCalendars = async (url: string, depth: '0' | '1') =>
    (await propfind({ url, props: CALENDAR_PROPS, depth, fetch })).filter((r) => r.ok && isCalendar(r));

  const located = options.knownCalendar
    ? { homeUrl: undefined, calendarUrl: withSlash(serverUrl) }
    : await locate(serverUrl, fetch, propfindCalendars, mayCarryCredentials);

  const readEtag = async (href: string): Promise<string> => {
    const [answer] = await propfind({ url: href, props: { 'd:getetag': {} }, depth: '0', fetch });
    const etag = textOf(answer?.props?.getetag);
    if (!etag) throw new CalDavRequestError(`${href} has no ETag: its changes cannot be made conditional`);
    return etag;
  };
  const stored = async (href: string, response: Response): Promise<CalDavStoredEvent> => {
    await response.body?.cancel().catch(() => undefined);
    // A server may store the event changed (normalised) and then send no ETag (RFC 4791 §5.3.4): read it back.
    return { href, etag: response.headers.get('etag') ?? (await readEtag(href)) };
  };

  return {
    homeUrl: located.homeUrl,
    calendarUrl: located.calendarUrl,

    async listCalendars() {
      const url = located.calendarUrl ?? located.homeUrl ?? serverUrl;
      const found = await propfindCalendars(url, located.calendarUrl ? '0' : '1');
      return found.map((r) => calendarOf(r, url));
    },

    async makeCalendar({ displayName, segment = `slotfeed-${randomUUID()}` }) {
      if (!located.homeUrl) {
        throw new CalDavNotSupportedError(
          `the account was opened on a calendar's own URL (${located.calendarUrl}): there is no calendar home to ` +
            "make one in; open it on the server's base URL instead",
        );
      }
      if (!/^[A-Za-z0-9._-]+$/.test(segment)) throw new TypeError('a calendar segment is [A-Za-z0-9._-]+');
      const url = `${withSlash(located.homeUrl)}${segment}/`;
      await makeCalendar({
        url,
        props: {
          'd:displayname': displayName,
          'c:supported-calendar-component-set': { 'c:comp': { _attributes: { name: 'VEVENT' } } },
        },
        fetch,
      });
      const [made] = await propfindCalendars(url, '0');
      if (!made) throw new CalDavRequestError(`MKCALENDAR ${url} succeeded, but there is no calendar there`);
      return calendarOf(made, url);
    },

    async createEvent(calendarUrl, { uid, icalendar }) {
      requireMarkedEvent(icalendar, uid);
      const filename = `${encodeURIComponent(uid)}.ics`;
      const href = new URL(filename, withSlash(calendarUrl)).href;
      const response = await createCalendarObject({
        calendar: { url: calendarUrl },
        iCalString: icalendar,
        filename,
        fetch,
      });
      return stored(href, response);
    },

    async updateEvent({ href, etag, icalendar }) {
      requireEtag(etag);
      requireMarkedEvent(icalendar);
      const response = await updateCalendarObject({
        calendarObject: { url: href, etag, data: icalendar },
        fetch,
      });
      return stored(href, response);
    },

    async deleteEvent({ href, etag }) {
      requireEtag(etag);
      const response = await deleteCalendarObject({ calendarObject: { url: href, etag }, fetch });
      await response.body?.cancel().catch(() => undefined);
    },

    async listFeedEvents(calendarUrl, feedId) {
      if (!/^[^\p{Cc}]+$/u.test(feedId))
        throw new TypeError('a feed id is non-empty text without control characters');
      // davRequest, not tsdav's calendarQuery: that one throws away a whole answer for one failed item.
      const answers = await davRequest({
        url: calendarUrl,
        init: {
          method: 'REPORT',
          headers: { depth: '1' },
          namespace: 'c',
          body: {
            'calendar-query': {
              _attributes: getDAVAttribute([DAVNamespace.CALDAV, DAVNamespace.DAV]),
              'd:prop': { 'd:getetag': {}, 'c:calendar-data': {} },
              filter: {
                'comp-filter': {
                  _attributes: { name: 'VCALENDAR' },
                  'comp-filter': {
                    _attributes: { name: 'VEVENT' },
                    'prop-filter': {
                      _attributes: { name: FEED_MARKER_PROPERTY },
                      'text-match': { _attributes: { collation: 'i;octet' }, _text: feedId },
                    },
                  },
                },
              },
            },
          },
        },
        fetch,
      }).catch((thrown: unknown) => {
        throw asCalDavError(
          thrown,
          () =>
            new CalDavRequestError(`REPORT ${calendarUrl} (calendar-query): the answer could not be read`),
        );
      });
      const collection = new URL(withSlash(calendarUrl)).pathname;
      const listing: CalDavFeedListing = { events: [], complete: true, failedItems: [] };
      for (const answer of answers) {
        const href = answer.href ? new URL(answer.href, withSlash(calendarUrl)).href : undefined;
        const failed = !answer.ok || (answer.status !== undefined && answer.status >= 400);
        if (href === undefined || withSlash(new URL(href).pathname) === collection) {
          // The collection's own entry: 507 says the server cut the answer short.
          if (failed) listing.complete = false;
          continue;
        }
        if (failed) {
          listing.failedItems.push({ href, status: answer.status ?? 0 });
          // A 404 item is gone; anything else may be one of slotfeed's events that could not be read.
          if (answer.status !== 404) listing.complete = false;
          continue;
        }
        const icalendar = textOf(answer.props?.calendarData);
        const etag = textOf(answer.props?.getetag);
        if (icalendar === undefined || !etag) {
          listing.complete = false;
          continue;
        }
        const identity = readEventIdentity(icalendar);
        if (identity?.feedId !== feedId) continue;
        listing.events.push({ href, etag, uid: identity.uid, icalendar, proof: identity.proof });
      }
      return listing;
    },

    async calendarExists(calendarUrl) {
      try {
        await propfind({ url: calendarUrl, props: { 'd:resourcetype': {} }, depth: '0', fetch });
        return true;
      } catch (thrown: unknown) {
        if (thrown instanceof CalDavNotFoundError) return false;
        throw thrown;
      }
    },
  };
}
