// A CalDAV calendar in memory, for the interleavings property test: the semantics slotfeed relies on, exactly
// (ETags that move with each write, If-None-Match: * and If-Match, 404 for a missing resource, a UID held at one
// href only: CALDAV:no-uid-conflict, the marker filter of a calendar-query), with each request passed through a
// `gate` the test controls, so fast-check's scheduler decides the order in which requests from concurrent pushes,
// removals, cleanups and the person's own edits reach it. The real servers' behaviour is held by the tests against
// Radicale and Xandikos; this one is for timings no real server can be made to produce on cue.
import {
  CalDavNotFoundError,
  CalDavPreconditionError,
  CalDavUidConflictError,
} from '../../../src/caldav/errors.js';
import { readEventIdentity } from '../../../src/caldav/event-marker.js';
import type {
  CalendarAccount,
  FeedEventListing,
  StoredEvent,
} from '../../../src/destinations/calendar-port.js';

export interface StoredObject {
  href: string;
  uid: string;
  etag: string;
  icalendar: string;
}

export interface MemoryCalendar {
  url: string;
  /** The calendar as it is now, by href. */
  objects(): StoredObject[];
  /** As the server answers its owner's own app: no gate, no conditions but the UID rule. */
  put(href: string, icalendar: string): StoredObject;
  remove(href: string): void;
  /** An account on this calendar whose every request passes `gate` first. */
  account(gate: <T>(label: string, request: () => T) => Promise<T>): CalendarAccount;
}

export function memoryCalendar(url = 'https://caldav.example.com/ada/free-time/'): MemoryCalendar {
  const objects = new Map<string, StoredObject>();
  let version = 0;
  const request = (method: string, href: string) => ({ request: { method, url: href } });

  const store = (href: string, icalendar: string): StoredObject => {
    const identity = readEventIdentity(icalendar);
    if (!identity) throw new TypeError('no VEVENT with a UID');
    const holder = [...objects.values()].find((o) => o.uid === identity.uid && o.href !== href);
    if (holder) {
      throw new CalDavUidConflictError(`PUT ${href} answered 409 (no-uid-conflict)`, {
        ...request('PUT', href),
        status: 409,
        condition: 'no-uid-conflict',
      });
    }
    const existing = objects.get(href);
    if (existing && existing.uid !== identity.uid) {
      throw new CalDavUidConflictError(`PUT ${href} answered 409 (no-uid-conflict)`, {
        ...request('PUT', href),
        status: 409,
        condition: 'no-uid-conflict',
      });
    }
    version += 1;
    const object = { href, uid: identity.uid, etag: `"v${version}"`, icalendar };
    objects.set(href, object);
    return object;
  };
  const stored = (object: StoredObject): StoredEvent => ({ href: object.href, etag: object.etag });

  return {
    url,
    objects: () => [...objects.values()].map((o) => ({ ...o })),
    put: store,
    remove: (href) => void objects.delete(href),
    account(gate) {
      return {
        calendarUrl: url,
        listCalendars: async () => [{ url, displayName: 'Free time', acceptsEvents: true }],
        makeCalendar: async () => {
          throw new Error('not in this test');
        },
        createEvent: (calendarUrl, event) =>
          gate(`create ${event.uid}`, () => {
            const href = `${calendarUrl}${encodeURIComponent(event.uid)}.ics`;
            if (objects.has(href))
              throw new CalDavPreconditionError(`PUT ${href} answered 412`, {
                ...request('PUT', href),
                status: 412,
              });
            return stored(store(href, event.icalendar));
          }),
        updateEvent: (event) =>
          gate(`update ${event.href}`, () => {
            const existing = objects.get(event.href);
            if (!existing)
              throw new CalDavNotFoundError(`PUT ${event.href} answered 404`, request('PUT', event.href));
            if (existing.etag !== event.etag)
              throw new CalDavPreconditionError(`PUT ${event.href} answered 412`, {
                ...request('PUT', event.href),
                status: 412,
              });
            return stored(store(event.href, event.icalendar));
          }),
        deleteEvent: (event) =>
          gate(`delete ${event.href}`, () => {
            const existing = objects.get(event.href);
            if (!existing)
              throw new CalDavNotFoundError(
                `DELETE ${event.href} answered 404`,
                request('DELETE', event.href),
              );
            if (existing.etag !== event.etag)
              throw new CalDavPreconditionError(`DELETE ${event.href} answered 412`, {
                ...request('DELETE', event.href),
                status: 412,
              });
            objects.delete(event.href);
          }),
        listFeedEvents: (_calendarUrl, feedId) =>
          gate(`list ${feedId}`, (): FeedEventListing => {
            const events = [...objects.values()].flatMap((object) => {
              const identity = readEventIdentity(object.icalendar);
              return identity?.feedId === feedId
                ? [{ ...stored(object), uid: object.uid, icalendar: object.icalendar, proof: identity.proof }]
                : [];
            });
            return { events, complete: true, failedItems: [] };
          }),
        calendarExists: async () => true,
      };
    },
  };
}
