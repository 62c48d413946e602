// Why a slot closed, decided from what the sync that closed it saw. Only `taken` means "most likely booked":
// the other reasons explain a vanished slot without a booking, and must not be counted as one.
import { DateTime } from 'luxon';

export type CloseReason = 'taken' | 'event_type_disabled' | 'event_type_removed' | 'passed' | 'window_moved';

export interface CloseContext {
  now: Date;
  /** Every event type the sync saw, by id: an id missing here was removed upstream. */
  eventTypes: ReadonlyMap<string, { enabled: boolean }>;
  /** The dates the sync pulled, in the account's zone; absent when unknown (then no slot is out of it). */
  horizon?: { zone: string; dates: ReadonlySet<string> };
}

export function closeReasonOf(slot: { eventId: string; startsAt: Date }, context: CloseContext): CloseReason {
  if (slot.startsAt.getTime() <= context.now.getTime()) return 'passed';
  const eventType = context.eventTypes.get(slot.eventId);
  if (!eventType) return 'event_type_removed';
  if (!eventType.enabled) return 'event_type_disabled';
  if (context.horizon) {
    const date = DateTime.fromJSDate(slot.startsAt, { zone: context.horizon.zone }).toISODate();
    if (date === null || !context.horizon.dates.has(date)) return 'window_moved';
  }
  return 'taken';
}
