// Bookings occupy the owner's time for all their event types; booking and freeing go through the slot rule so
// the control API can only book what a guest could book.
import type { Prng } from './prng.js';
import { bookableSlotStarts } from './schedule.js';
import type { SimBooking, SimEventType, SimUser } from './types.js';
import { SimulatorControlError } from './types.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export function calendarOf(user: SimUser) {
  return {
    timezone: user.profile.timezone,
    weeklyHours: user.weeklyHours,
    disabledDays: user.disabledDays,
    disabledMonths: user.disabledMonths,
    bookings: user.bookings,
  };
}

export function findEventType(
  users: readonly SimUser[],
  eventId: string,
): { user: SimUser; event: SimEventType } | undefined {
  for (const user of users) {
    const event = user.eventTypes.find((e) => e.payload.event_id === eventId);
    if (event) return { user, event };
  }
  return undefined;
}

export function parseInstant(iso: string, name: string): number {
  const ms = Date.parse(iso);
  // Date.parse accepts zone-less strings as local time; an instant must say its offset.
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(iso) || Number.isNaN(ms)) {
    throw new SimulatorControlError(400, `${name} must be an ISO 8601 instant with Z or an offset`);
  }
  return ms;
}

/** Books a slot a guest could book; returns the booking and whose it is. */
export function bookSlot(
  users: readonly SimUser[],
  eventId: string,
  startIso: string,
  nowMs: number,
): { userId: string; booking: SimBooking } {
  const found = findEventType(users, eventId);
  if (!found) throw new SimulatorControlError(404, 'unknown event type');
  const start = parseInstant(startIso, 'start');
  const offered = bookableSlotStarts(calendarOf(found.user), found.event, start, start + 1, nowMs);
  if (offered[0] !== start) throw new SimulatorControlError(409, 'that slot is not currently offered');
  const endMs = start + found.event.payload.duration_minutes * MINUTE_MS;
  const booking = { eventId, startMs: start, endMs };
  found.user.bookings.push(booking);
  return { userId: found.user.id, booking };
}

/** Frees a booking; returns it and whose it was. */
export function freeSlot(
  users: readonly SimUser[],
  eventId: string,
  startIso: string,
): { userId: string; booking: SimBooking } {
  const start = parseInstant(startIso, 'start');
  for (const user of users) {
    const index = user.bookings.findIndex((b) => b.eventId === eventId && b.startMs === start);
    if (index >= 0) {
      const [booking] = user.bookings.splice(index, 1);
      return { userId: user.id, booking: booking! };
    }
  }
  throw new SimulatorControlError(404, 'no such booking');
}

/** A couple of existing bookings per user in the coming ten days, so a fresh world is not perfectly empty. */
export function seedBookings(users: readonly SimUser[], prng: Prng, nowMs: number): void {
  for (const user of users) {
    const bookable = user.eventTypes.filter((e) => e.payload.enabled);
    const count = prng.intBetween(1, 3);
    for (let i = 0; i < count && bookable.length > 0; i++) {
      const event = prng.pick(bookable);
      const starts = bookableSlotStarts(calendarOf(user), event, nowMs, nowMs + 10 * DAY_MS, nowMs);
      if (starts.length === 0) continue;
      const start = prng.pick(starts);
      user.bookings.push({
        eventId: event.payload.event_id,
        startMs: start,
        endMs: start + event.payload.duration_minutes * MINUTE_MS,
      });
    }
  }
}
