// Whether a stored open slot that a sync did not fetch closes, and why, decided from what that sync saw. Only
// `taken` means "most likely booked": the other reasons explain a vanished slot without a booking, and must not
// be counted as one. A partial sync leaves open what it did not look at.
import { localDateOf } from '../lib/zone-days.js';

export type CloseReason = 'taken' | 'event_type_disabled' | 'event_type_removed' | 'passed' | 'window_moved';

export interface CloseContext {
  now: Date;
  /** Every event type the sync saw, by id: an id missing here was removed upstream. */
  eventTypes: ReadonlyMap<string, { enabled: boolean }>;
  /** The horizon's dates, in the account's zone; absent when unknown (then no slot is out of it). */
  horizon?: {
    zone: string;
    dates: ReadonlySet<string>;
    /** The dates the sync pulled slots of; absent: all of the horizon's. */
    pulled?: ReadonlySet<string>;
  };
}

/**
 * Why a slot the sync did not fetch closed, or null when it stays open: its date is in the horizon but the sync
 * did not pull it, so nothing was seen of it. A sync may close, without pulling their dates, slots whose reason
 * holds on every date: one that started, one of an event type the whole list shows removed or disabled, one on
 * a date that left the horizon.
 */
export function closeReasonOf(
  slot: { eventId: string; startsAt: Date },
  context: CloseContext,
): CloseReason | null {
  if (slot.startsAt.getTime() <= context.now.getTime()) return 'passed';
  const eventType = context.eventTypes.get(slot.eventId);
  if (!eventType) return 'event_type_removed';
  if (!eventType.enabled) return 'event_type_disabled';
  const { horizon } = context;
  if (horizon) {
    const date = localDateOf(slot.startsAt, horizon.zone);
    if (date === null || !horizon.dates.has(date)) return 'window_moved';
    if (horizon.pulled && !horizon.pulled.has(date)) return null;
  }
  return 'taken';
}
