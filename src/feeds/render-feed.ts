// Snapshot → iCalendar text. Pure: the same input gives the same bytes (no clock, no random, a fixed order),
// which is what lets the web layer derive a strong ETag from the feed version and cache renders.
//
// Choices worth knowing:
// - No METHOD. RFC 5545 §3.7.2: without METHOD an object is a snapshot of calendar data with no scheduling
//   semantics, which is what a subscription is; METHOD would also oblige the Content-Type to carry a matching
//   `method=` parameter. Google, Apple, Outlook and Thunderbird subscribe to feeds without it.
// - No VTIMEZONE: every time is UTC ("Z").
// - COLOR only as a CSS3 name (RFC 7986); see css-colors.ts for when it is left out.
// - X-MICROSOFT-CDO-BUSYSTATUS:FREE alongside TRANSP:TRANSPARENT: Outlook desktop reads the former.
import {
  ICalCalendar,
  ICalEventBusyStatus,
  ICalEventStatus,
  ICalEventTransparency,
  type ICalEventData,
} from 'ical-generator';
import { cssColorNameFor } from './css-colors.js';
import type { FeedEventType, FeedSlot } from './feed-model.js';
import { escapeText, normalizeContentLines, sanitizeText } from './ics-text.js';
import { compareText, mergeSlots } from './merge-slots.js';
import { slotUid } from './slot-uid.js';

export type { FeedEventType, FeedSlot } from './feed-model.js';
export { mergeSlots } from './merge-slots.js';
export { slotUid } from './slot-uid.js';

export const FEED_PRODID = '-//slotfeed//slotfeed//EN';

export interface FeedRenderInput {
  connectionId: string;
  /** NAME / X-WR-CALNAME */
  calendarName: string;
  /** X-WR-CALDESC */
  description: string;
  /** REFRESH-INTERVAL;VALUE=DURATION and X-PUBLISHED-TTL */
  refreshIntervalSeconds: number;
  eventTypes: ReadonlyMap<string, FeedEventType>;
  /** Open slots, any order. */
  slots: readonly FeedSlot[];
  merge: boolean;
  maxEvents: number;
}

// ical-generator only accepts X- names in x(); COLOR goes out under this name and is renamed afterwards.
const COLOR_PLACEHOLDER = 'X-SLOTFEED-COLOR';

interface PlacedSlot {
  slot: FeedSlot;
  eventType: FeedEventType;
  uid: string;
  endsAt: Date;
}

/** A slot whose end is not after its start would make an invalid VEVENT: its end is recomputed or it is dropped. */
function validEnd(slot: FeedSlot, eventType: FeedEventType): Date | undefined {
  if (slot.endsAt.getTime() > slot.startsAt.getTime()) return slot.endsAt;
  if (eventType.durationMinutes > 0)
    return new Date(slot.startsAt.getTime() + eventType.durationMinutes * 60_000);
  return undefined;
}

/** An http(s) booking link, normalised; anything else (javascript:, garbage) is not linked. */
function bookingUrl(url: string | null): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url.trim());
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/** The library escapes URL values as TEXT (`\,` `\;`), which is wrong in a URI: percent-encode those instead. */
const uriValue = (url: string) => url.replace(/;/g, '%3B').replace(/,/g, '%2C');

/** Slots that can be shown, in feed order (start, then UID), one per UID, at most maxEvents. */
function placeSlots(input: FeedRenderInput): PlacedSlot[] {
  const slots = input.merge ? mergeSlots(input.slots) : input.slots;
  const placed: PlacedSlot[] = [];
  for (const slot of slots) {
    const eventType = input.eventTypes.get(slot.eventId);
    if (!eventType) continue;
    const endsAt = validEnd(slot, eventType);
    if (!endsAt) continue;
    placed.push({ slot, eventType, endsAt, uid: slotUid(input.connectionId, slot.eventId, slot.startsAt) });
  }
  placed.sort(
    (a, b) =>
      a.slot.startsAt.getTime() - b.slot.startsAt.getTime() ||
      compareText(a.uid, b.uid) ||
      b.endsAt.getTime() - a.endsAt.getTime(),
  );
  // Duplicates cannot come from the store (one open row per event type and start); plain input may hold them.
  const unique = placed.filter((p, i) => i === 0 || placed[i - 1]?.uid !== p.uid);
  return unique.slice(0, Math.max(0, Math.floor(input.maxEvents)));
}

function eventData({ slot, eventType, uid, endsAt }: PlacedSlot): ICalEventData {
  const url = bookingUrl(eventType.url);
  const color = cssColorNameFor(eventType.color);
  return {
    id: uid,
    sequence: slot.sequence,
    stamp: slot.firstSeenAt,
    lastModified: slot.lastChangedAt,
    start: slot.startsAt,
    end: endsAt,
    summary: sanitizeText(eventType.title),
    transparency: ICalEventTransparency.TRANSPARENT,
    busystatus: ICalEventBusyStatus.FREE,
    status: ICalEventStatus.CONFIRMED,
    ...(url ? { url: uriValue(url), description: `Open for booking: ${url}` } : {}),
    ...(color ? { x: [[COLOR_PLACEHOLDER, color]] as [string, string][] } : {}),
  };
}

export function renderFeed(input: FeedRenderInput): string {
  const calendar = new ICalCalendar({
    prodId: FEED_PRODID.slice(1),
    scale: 'GREGORIAN',
    // The library writes both as they are: they must arrive escaped.
    name: escapeText(input.calendarName),
    description: escapeText(input.description),
    ttl: Math.max(1, Math.round(input.refreshIntervalSeconds)),
  });
  for (const placed of placeSlots(input)) calendar.createEvent(eventData(placed));
  return normalizeContentLines(
    calendar
      .toString()
      .replace(/\r\n[ \t]/g, '')
      .replaceAll(`\r\n${COLOR_PLACEHOLDER}:`, '\r\nCOLOR:'),
  );
}
