// A feed's events as they will be published, computed from plain data: the view decides what an event is (a
// block of free time, or one bookable slot), and the cap counts what is shown, after merging.
import { createHash } from 'node:crypto';
import { cssColorNameFor } from './css-colors.js';
import { busyBlocks } from './busy-blocks.js';
import type { FeedBooking, FeedEvent, FeedEventType, FeedSlot } from './feed-model.js';
import { DEFAULT_FREE_SUMMARY, showsBusy, showsFree, type FeedView } from './feed-options.js';
import { freeBlocks, type FreeBlock } from './free-blocks.js';
import { sanitizeText } from './ics-text.js';
import { durationLabel } from '../lib/duration-label.js';
import { compareText, mergeSlots } from './merge-slots.js';
import { busyBlockUid, freeBlockUid, slotUid } from './slot-uid.js';

export const BUSY_SUMMARY = 'Busy';

export interface FeedEventsInput {
  connectionId: string;
  view: FeedView;
  /** The event types the slots may belong to (current versions); a slot of another is not shown. */
  eventTypes: ReadonlyMap<string, FeedEventType>;
  /** Open slots of the included event types in the window, any order. */
  slots: readonly FeedSlot[];
  /** `slots` view: join one event type's touching slots. */
  merge: boolean;
  /** `free` views: every free block's SUMMARY. */
  summary?: string;
  /** Busy views: the inferred bookings in the window, any order (time free again now is left out). */
  bookings?: readonly FeedBooking[];
  maxEvents: number;
}

export interface PlannedFeed {
  /** In feed order (start, then UID), at most maxEvents. */
  events: FeedEvent[];
  /** How many events the whole window holds: more than events.length when the cap cut it. */
  total: number;
}

const later = (a: Date, b: Date) => (b.getTime() > a.getTime() ? b : a);

/** An http(s) booking link, normalised; anything else (javascript:, garbage) is not linked. */
export function bookingUrl(url: string | null): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url.trim());
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/** A slot whose end is not after its start would make an invalid VEVENT: its end is recomputed or it is dropped. */
export function usableSlotEnd(slot: FeedSlot, eventType: FeedEventType): Date | undefined {
  if (slot.endsAt.getTime() > slot.startsAt.getTime()) return slot.endsAt;
  if (eventType.durationMinutes > 0)
    return new Date(slot.startsAt.getTime() + eventType.durationMinutes * 60_000);
  return undefined;
}

function slotEvents(input: FeedEventsInput): FeedEvent[] {
  const slots = input.merge ? mergeSlots(input.slots) : input.slots;
  const events: FeedEvent[] = [];
  for (const slot of slots) {
    const eventType = input.eventTypes.get(slot.eventId);
    if (!eventType) continue;
    const endsAt = usableSlotEnd(slot, eventType);
    if (!endsAt) continue;
    const url = bookingUrl(eventType.url);
    const color = cssColorNameFor(eventType.color);
    events.push({
      uid: slotUid(input.connectionId, slot.eventId, slot.startsAt),
      startsAt: slot.startsAt,
      endsAt,
      summary: sanitizeText(eventType.title),
      ...(url ? { url, description: `Open for booking: ${url}` } : {}),
      ...(color ? { color } : {}),
      history: { sequence: slot.sequence, changedAt: later(slot.firstSeenAt, slot.lastChangedAt) },
    });
  }
  return events;
}

/** What can be booked inside a block, one line per event type, each with its booking link. */
function blockOffers(block: FreeBlock, eventTypes: ReadonlyMap<string, FeedEventType>) {
  return block.eventIds
    .flatMap((id) => {
      const eventType = eventTypes.get(id);
      return eventType ? [{ id, eventType, url: bookingUrl(eventType.url) }] : [];
    })
    .sort((a, b) => compareText(a.eventType.title, b.eventType.title) || compareText(a.id, b.id));
}

/**
 * A person's free time: their open slots of the given event types merged into blocks. Slots whose event type
 * is unknown, or whose end must be recomputed, are fixed as the slots view would.
 */
export function usableFreeBlocks(input: Pick<FeedEventsInput, 'eventTypes' | 'slots'>): FreeBlock[] {
  const usable = input.slots.flatMap((slot) => {
    const eventType = input.eventTypes.get(slot.eventId);
    const endsAt = eventType && usableSlotEnd(slot, eventType);
    return endsAt ? [{ ...slot, endsAt }] : [];
  });
  return freeBlocks(usable);
}

/** Busy time as opaque events: the bookings' union less what is free again. No description: it is nobody's business what. */
function busyEvents(input: FeedEventsInput): FeedEvent[] {
  return busyBlocks(input.bookings ?? [], usableFreeBlocks(input)).map((block) => ({
    uid: busyBlockUid(input.connectionId, block.startsAt),
    startsAt: block.startsAt,
    endsAt: block.endsAt,
    summary: BUSY_SUMMARY,
    busy: true,
    history: { sequence: 0, changedAt: block.changedAt },
  }));
}

function freeEvents(input: FeedEventsInput): FeedEvent[] {
  const summary = sanitizeText(input.summary ?? DEFAULT_FREE_SUMMARY);
  return usableFreeBlocks(input).map((block) => {
    const offers = blockOffers(block, input.eventTypes);
    const lines = offers.map(
      ({ eventType, url }) =>
        `${sanitizeText(eventType.title)} (${durationLabel(eventType.durationMinutes)})${url ? `: ${url}` : ''}`,
    );
    const urls = new Set(offers.flatMap((offer) => offer.url ?? []));
    const [onlyUrl] = urls.size === 1 ? [...urls] : [];
    return {
      uid: freeBlockUid(input.connectionId, block.startsAt),
      startsAt: block.startsAt,
      endsAt: block.endsAt,
      summary,
      description: ['Bookable in this time:', ...lines].join('\n'),
      ...(onlyUrl ? { url: onlyUrl } : {}),
      history: { sequence: block.sequence, changedAt: block.lastChangedAt },
    };
  });
}

/** The feed's events, in feed order, cut to the cap after merging, with the count before the cut. */
export function planFeedEvents(input: FeedEventsInput): PlannedFeed {
  const events =
    input.view === 'slots'
      ? slotEvents(input)
      : [
          ...(showsFree(input.view) ? freeEvents(input) : []),
          ...(showsBusy(input.view) ? busyEvents(input) : []),
        ];
  events.sort(
    (a, b) =>
      a.startsAt.getTime() - b.startsAt.getTime() ||
      compareText(a.uid, b.uid) ||
      b.endsAt.getTime() - a.endsAt.getTime(),
  );
  // Duplicates cannot come from the store (one open row per event type and start); plain input may hold them.
  const unique = events.filter((e, i) => i === 0 || events[i - 1]?.uid !== e.uid);
  return { events: unique.slice(0, Math.max(0, Math.floor(input.maxEvents))), total: unique.length };
}

/**
 * A digest of everything a subscriber sees of an event except its revision: when it differs from the digest
 * last published under its UID, the event changed, and its SEQUENCE and DTSTAMP must move.
 */
export function feedEventDigest(event: FeedEvent): string {
  const seen = [
    event.startsAt.toISOString(),
    event.endsAt.toISOString(),
    event.summary,
    event.description ?? null,
    event.url ?? null,
    event.color ?? null,
    // Only busy events carry the flag, so the digests of every event published before it existed stay put.
    ...(event.busy ? ['busy'] : []),
  ];
  return createHash('sha256').update(JSON.stringify(seen), 'utf8').digest('base64url').slice(0, 22);
}
