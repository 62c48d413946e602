// A feed's window as one iCalendar VFREEBUSY (RFC 5545 §3.6.4): FREEBUSY;FBTYPE=FREE periods for the free
// blocks and FBTYPE=BUSY for the inferred bookings, in UTC, sorted and merged, one period per line. What
// Outlook's "Internet free/busy" and Thunderbird read for a person. Pure, like render-feed.ts: the same input
// gives the same bytes. No METHOD and no ORGANIZER: published free/busy under RFC 5545 alone needs neither,
// and an ORGANIZER would have to be an e-mail address the feed must not reveal.
import { unionOf, type Interval } from './busy-blocks.js';
import { normalizeContentLines } from './ics-text.js';
import { FEED_PRODID } from './render-feed.js';

export interface FreeBusyInput {
  uid: string;
  /** DTSTAMP: when what it says last changed. */
  stamp: Date;
  windowStart: Date;
  windowEnd: Date;
  free: readonly Interval[];
  busy: readonly Interval[];
}

/** 20260302T090000Z */
export function utcStamp(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

const later = (a: Date, b: Date) => (b.getTime() > a.getTime() ? b : a);

/** Inside the window, joined where they overlap or touch, in start order. */
function periods(items: readonly Interval[], windowStart: Date, windowEnd: Date): Interval[] {
  const clipped = items.map((i) => ({
    startsAt: later(i.startsAt, windowStart),
    endsAt: i.endsAt.getTime() < windowEnd.getTime() ? i.endsAt : windowEnd,
  }));
  return unionOf(clipped, (a, b) => ({ startsAt: a.startsAt, endsAt: later(a.endsAt, b.endsAt) }));
}

export function renderFreeBusy(input: FreeBusyInput): string {
  const line = (type: 'FREE' | 'BUSY') => (p: Interval) =>
    `FREEBUSY;FBTYPE=${type}:${utcStamp(p.startsAt)}/${utcStamp(p.endsAt)}`;
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    `PRODID:${FEED_PRODID}`,
    'CALSCALE:GREGORIAN',
    'BEGIN:VFREEBUSY',
    `UID:${input.uid}`,
    `DTSTAMP:${utcStamp(input.stamp)}`,
    `DTSTART:${utcStamp(input.windowStart)}`,
    `DTEND:${utcStamp(input.windowEnd)}`,
    ...periods(input.free, input.windowStart, input.windowEnd).map(line('FREE')),
    ...periods(input.busy, input.windowStart, input.windowEnd).map(line('BUSY')),
    'END:VFREEBUSY',
    'END:VCALENDAR',
  ];
  return normalizeContentLines(lines.join('\r\n'));
}
