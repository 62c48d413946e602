// Snapshot → iCalendar text. Pure: the same input gives the same bytes (no clock, no random, a fixed order),
// which is what lets the web layer derive a strong ETag from the feed version and cache renders.
//
// Choices worth knowing:
// - No METHOD. RFC 5545 §3.7.2: without METHOD an object is a snapshot of calendar data with no scheduling
//   semantics, which is what a subscription is; METHOD would also oblige the Content-Type to carry a matching
//   `method=` parameter. Google, Apple, Outlook and Thunderbird subscribe to feeds without it.
// - No VTIMEZONE: every time is UTC ("Z").
// - What an event is comes from the view (feed-events.ts); SEQUENCE and DTSTAMP from its revision.
// - COLOR only as a CSS3 name (RFC 7986); see css-colors.ts for when it is left out.
// - X-MICROSOFT-CDO-BUSYSTATUS:FREE alongside TRANSP:TRANSPARENT (BUSY with OPAQUE for busy time): Outlook
//   desktop reads the former.
import {
  ICalCalendar,
  ICalEventBusyStatus,
  ICalEventStatus,
  ICalEventTransparency,
  type ICalEventData,
} from 'ical-generator';
import { planFeedEvents, type FeedEventsInput, type PlannedFeed } from './feed-events.js';
import type { EventRevision, FeedEvent } from './feed-model.js';
import { escapeText, normalizeContentLines } from './ics-text.js';

export type { FeedEventType, FeedSlot } from './feed-model.js';
export { mergeSlots } from './merge-slots.js';
export { freeBlockUid, slotUid } from './slot-uid.js';

export const FEED_PRODID = '-//slotfeed//slotfeed//EN';

export interface CalendarHead {
  /** NAME / X-WR-CALNAME */
  calendarName: string;
  /** X-WR-CALDESC; a cut feed says so after it. */
  description: string;
  /** REFRESH-INTERVAL;VALUE=DURATION and X-PUBLISHED-TTL */
  refreshIntervalSeconds: number;
}

export interface FeedRenderInput extends CalendarHead, FeedEventsInput {
  /** Revisions published before, by UID; an event without one carries its history's. */
  revisions?: ReadonlyMap<string, EventRevision>;
}

// ical-generator only accepts X- names in x(); COLOR goes out under this name and is renamed afterwards.
const COLOR_PLACEHOLDER = 'X-SLOTFEED-COLOR';

/** The library escapes URL values as TEXT (`\,` `\;`), which is wrong in a URI: percent-encode those instead. */
const uriValue = (url: string) => url.replace(/;/g, '%3B').replace(/,/g, '%2C');

/** All an event's VEVENT is rendered from: a CalDAV push keeps an event's resource while this stays the same. */
export function eventData(event: FeedEvent, revision: EventRevision): ICalEventData {
  return {
    id: event.uid,
    sequence: revision.sequence,
    // Without METHOD, DTSTAMP is when the event's information was last revised (RFC 5545 §3.8.7.2).
    stamp: revision.changedAt,
    lastModified: revision.changedAt,
    start: event.startsAt,
    end: event.endsAt,
    summary: event.summary,
    transparency: event.busy ? ICalEventTransparency.OPAQUE : ICalEventTransparency.TRANSPARENT,
    busystatus: event.busy ? ICalEventBusyStatus.BUSY : ICalEventBusyStatus.FREE,
    status: ICalEventStatus.CONFIRMED,
    ...(event.url ? { url: uriValue(event.url) } : {}),
    ...(event.description ? { description: event.description } : {}),
    ...(event.color ? { x: [[COLOR_PLACEHOLDER, event.color]] as [string, string][] } : {}),
  };
}

/** "showing the first N of M" for a feed the cap cut: a subscriber must not take a cut feed for all there is. */
function describeCut(description: string, planned: PlannedFeed): string {
  if (planned.total <= planned.events.length) return description;
  const last = planned.events.at(-1);
  const until = last ? `, up to ${last.startsAt.toISOString().slice(0, 10)} (UTC)` : '';
  return `${description} Showing the first ${planned.events.length} of ${planned.total} events${until}.`;
}

/** The revision an event goes out with: the one published before, else its history's. */
export const revisionOf = (event: FeedEvent, revisions: ReadonlyMap<string, EventRevision>): EventRevision =>
  revisions.get(event.uid) ?? event.history;

export function renderCalendar(
  head: CalendarHead,
  planned: PlannedFeed,
  revisions: ReadonlyMap<string, EventRevision> = new Map(),
): string {
  const calendar = new ICalCalendar({
    prodId: FEED_PRODID.slice(1),
    scale: 'GREGORIAN',
    // The library writes both as they are: they must arrive escaped.
    name: escapeText(head.calendarName),
    description: escapeText(describeCut(head.description, planned)),
    ttl: Math.max(1, Math.round(head.refreshIntervalSeconds)),
  });
  for (const event of planned.events) {
    calendar.createEvent(eventData(event, revisionOf(event, revisions)));
  }
  return normalizeContentLines(
    calendar
      .toString()
      .replace(/\r\n[ \t]/g, '')
      .replaceAll(`\r\n${COLOR_PLACEHOLDER}:`, '\r\nCOLOR:'),
  );
}

/** Plan and render in one step, for callers that hold every revision already (or none). */
export function renderFeed(input: FeedRenderInput): string {
  return renderCalendar(input, planFeedEvents(input), input.revisions);
}
