// A feed's events as CalDAV event resources: the feed's own .ics, as the feed route serves it (same render, same
// revisions, same cap), cut into one VCALENDAR per VEVENT. Each keeps the VEVENT's lines as rendered, with
// slotfeed's marker naming the feed added, so a calendar app shows exactly what a subscriber of the .ics sees, and
// slotfeed can tell its own events from a person's. Nothing here renders an event: that is feeds/render-feed.ts.
import { createHash } from 'node:crypto';
import { EVENT_PROOF_PROPERTY, FEED_MARKER_PROPERTY } from '../caldav/event-marker.js';
import { normalizeContentLines } from '../feeds/ics-text.js';
import type { EventProofs } from './event-proofs.js';

/** One event as it is written to the calendar. */
export interface EventObject {
  uid: string;
  /** A VCALENDAR holding the one VEVENT. */
  icalendar: string;
  /** Of `icalendar`: what a destination records it wrote, to tell a changed event from an unchanged one. */
  digest: string;
}

/** The calendar's properties an event resource repeats; the rest (name, description, refresh) are the feed's. */
const OBJECT_PROPERTIES = new Set(['VERSION', 'PRODID', 'CALSCALE']);

const nameOf = (line: string) => line.slice(0, Math.max(0, line.search(/[;:]/))).toUpperCase();

export const eventObjectDigest = (icalendar: string): string =>
  createHash('sha256').update(icalendar, 'utf8').digest('base64url').slice(0, 32);

/**
 * The events of a rendered feed (feeds/render-feed.ts's output), in its order, each with the marker naming
 * `feedId` and the proof that binds it to the event's UID (event-proofs.ts). Throws for text that is no rendered
 * feed (a VEVENT without a UID, or one left open).
 */
export function eventObjects(
  calendarText: string,
  feedId: string,
  proofs: Pick<EventProofs, 'sign'>,
): EventObject[] {
  const lines = calendarText.replace(/\r?\n[ \t]/g, '').split(/\r?\n/);
  const head: string[] = [];
  const objects: EventObject[] = [];
  let event: string[] | undefined;
  for (const line of lines) {
    if (event === undefined) {
      if (line.toUpperCase() === 'BEGIN:VEVENT') event = [line];
      else if (OBJECT_PROPERTIES.has(nameOf(line))) head.push(line);
      continue;
    }
    if (line.toUpperCase() !== 'END:VEVENT') {
      event.push(line);
      continue;
    }
    const uidLine = event.find((l) => nameOf(l) === 'UID');
    if (uidLine === undefined) throw new Error('a rendered feed has a VEVENT without a UID');
    // A copy of its own: a slice of the text would keep the whole rendered text alive with the resource, which a
    // push keeps (feed-event-objects.ts).
    const uid = Buffer.from(uidLine.slice(uidLine.indexOf(':') + 1), 'utf8').toString('utf8');
    const icalendar = normalizeContentLines(
      [
        'BEGIN:VCALENDAR',
        ...head,
        ...event,
        `${FEED_MARKER_PROPERTY}:${feedId}`,
        `${EVENT_PROOF_PROPERTY}:${proofs.sign(feedId, uid)}`,
        'END:VEVENT',
        'END:VCALENDAR',
      ].join('\r\n'),
    );
    objects.push({ uid, icalendar, digest: eventObjectDigest(icalendar) });
    event = undefined;
  }
  if (event !== undefined) throw new Error('a rendered feed ends inside a VEVENT');
  return objects;
}
