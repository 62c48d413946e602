// What destinations need of a CalDAV account: the CalDAV client (src/caldav/, openCalDavAccount) provides it, and
// the composition root hands it in. Narrow on purpose: the push and the service name no transport, and every
// failure is one of the client's typed errors (src/caldav/errors.ts), which push-policy.ts decides on.

/** A calendar on the server as discovery lists it. */
export interface CalendarInfo {
  url: string;
  displayName: string;
  acceptsEvents: boolean;
}

/** An event resource where it is stored, under the ETag the server gave it. */
export interface StoredEvent {
  href: string;
  etag: string;
}

/** An event the server lists under a feed's marker. */
export interface MarkedEvent extends StoredEvent {
  uid: string;
  icalendar: string;
  /** Its X-SLOTFEED-PROOF, when it carries one (event-proofs.ts says whether it fits the UID). */
  proof: string | undefined;
}

/** A feed's events as a calendar-query found them. */
export interface FeedEventListing {
  events: MarkedEvent[];
  /** False when the answer was cut short or an item could not be read: absence then proves nothing. */
  complete: boolean;
  failedItems: { href: string; status: number }[];
}

export interface CalendarAccount {
  /** Set when the account was opened on one calendar's own URL: that calendar is the only one. */
  readonly calendarUrl: string | undefined;
  listCalendars(): Promise<CalendarInfo[]>;
  makeCalendar(input: { displayName: string; segment?: string }): Promise<CalendarInfo>;
  /** PUT with If-None-Match: * (CalDavPreconditionError when the UID is there already). */
  createEvent(calendarUrl: string, event: { uid: string; icalendar: string }): Promise<StoredEvent>;
  /** PUT with If-Match (CalDavPreconditionError when the ETag is stale, CalDavNotFoundError when it is gone). */
  updateEvent(event: StoredEvent & { icalendar: string }): Promise<StoredEvent>;
  /** DELETE with If-Match. */
  deleteEvent(event: StoredEvent): Promise<void>;
  /** The events whose marker names `feedId` exactly; CalDavNotFoundError when the calendar is gone. */
  listFeedEvents(calendarUrl: string, feedId: string): Promise<FeedEventListing>;
  calendarExists(calendarUrl: string): Promise<boolean>;
}

/** Opens an account: discovery from `serverUrl` (a server's address, or a calendar's own URL). */
export type OpenCalendarAccount = (target: {
  serverUrl: string;
  username: string;
  password: string;
  /** `serverUrl` is a calendar found before: opened without a request (a push, a cleanup). */
  knownCalendar?: boolean;
}) => Promise<CalendarAccount>;
