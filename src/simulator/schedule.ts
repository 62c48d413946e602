// The slot rule: the single source of truth for what is bookable. The overview, the slots endpoint, booking
// checks and the tests' ground truth (control.slotsFor) all go through bookableSlotStarts, so they cannot
// disagree.
//
// Slot rule. For every owner-local date and every working range of that date's weekday (owner's zone):
//   candidate starts are range.start, range.start + d, range.start + 2d, … in owner-local WALL-CLOCK time
//   (d = duration_minutes), while wall start + d ≤ range.end. A candidate is bookable iff
//   - its local time exists (a time inside a spring-forward gap is skipped; a time repeated by a fall-back
//     maps to its earlier instant only, so it appears once);
//   - start > now, and start + d ≤ the range end as an instant (a range cut short by DST loses its last slot);
//   - the owner-local date is not a disabled day and its month is not a disabled month;
//   - the owner-local date ≤ owner-local today + max_days_ahead (the horizon);
//   - no booking of the owner (of ANY of their event types) overlaps
//     [start − buffer_before, start + d + buffer_after] (touching ends do not overlap).
// Disabled event types have no slots.
import type { SimBooking, SimEventType, WeeklyHours } from './types.js';
import { WEEKDAYS } from './types.js';
import {
  DAY_MS,
  dayNumberOf,
  isoDateOfDay,
  localDayNumber,
  wallConverterForDay,
  wallToInstant,
  weekdayIndexOfDay,
  zoneNamed,
} from './zone-time.js';

const MINUTE_MS = 60_000;

export interface OwnerCalendar {
  timezone: string;
  weeklyHours: WeeklyHours;
  disabledDays: readonly string[];
  disabledMonths: readonly number[];
  bookings: readonly SimBooking[];
}

export function minutesOfDay(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

/**
 * Whether any booking overlaps [fromMs, toMs) (touching ends do not): the bookings sorted by start once per scan,
 * with the latest end up to each, so a candidate is checked by a binary search instead of against every booking
 * (an overview's thousand candidates against a history's hundred bookings was most of the rule's time).
 */
function bookingClashes(bookings: readonly SimBooking[]): (fromMs: number, toMs: number) => boolean {
  const sorted = [...bookings].sort((a, b) => a.startMs - b.startMs);
  const latestEnd: number[] = [];
  for (const [i, booking] of sorted.entries())
    latestEnd.push(Math.max(latestEnd[i - 1] ?? -Infinity, booking.endMs));
  return (fromMs, toMs) => {
    // The bookings that start before toMs are sorted[0 … below); one of them overlaps iff one ends after fromMs.
    let low = 0;
    let below = sorted.length;
    while (low < below) {
      const middle = (low + below) >>> 1;
      if (sorted[middle]!.startMs < toMs) low = middle + 1;
      else below = middle;
    }
    return below > 0 && latestEnd[below - 1]! > fromMs;
  };
}

/** Calendar arithmetic on 'YYYY-MM-DD' strings, independent of any zone. */
export function addDays(isoDate: string, days: number): string {
  return isoDateOfDay(dayNumberOf(isoDate) + days);
}

/** The instant a local date starts in `zone` (a nonexistent midnight moves forward, as a clock does). */
export function startOfLocalDateMs(isoDate: string, zone: string): number {
  return wallToInstant(zoneNamed(zone), dayNumberOf(isoDate) * DAY_MS).ms;
}

export function localDateOf(ms: number, zone: string): string {
  return isoDateOfDay(localDayNumber(zoneNamed(zone), ms));
}

/** Exclusive instant after which nothing is bookable: the end of owner-local today + max_days_ahead. */
export function horizonEndMs(calendar: OwnerCalendar, event: SimEventType, nowMs: number): number {
  const zone = zoneNamed(calendar.timezone);
  const lastDay = localDayNumber(zone, nowMs) + event.maxDaysAhead;
  return wallToInstant(zone, (lastDay + 1) * DAY_MS).ms;
}

/** Every bookable slot start (epoch ms, ascending, unique) with fromMs ≤ start < toMs. */
export function bookableSlotStarts(
  calendar: OwnerCalendar,
  event: SimEventType,
  fromMs: number,
  toMs: number,
  nowMs: number,
): number[] {
  const { payload } = event;
  if (!payload.enabled) return [];
  const zone = zoneNamed(calendar.timezone);
  // Bounding by now and the horizon keeps the scan short whatever range a caller asks for.
  const lower = Math.max(fromMs, nowMs + 1);
  const upper = Math.min(toMs, horizonEndMs(calendar, event, nowMs));
  if (lower >= upper) return [];
  const duration = payload.duration_minutes;
  const durationMs = duration * MINUTE_MS;
  const beforeMs = payload.buffer_before_minutes * MINUTE_MS;
  const afterMs = payload.buffer_after_minutes * MINUTE_MS;
  const disabledDays = new Set(calendar.disabledDays);
  const disabledMonths = new Set(calendar.disabledMonths);
  const clashes = bookingClashes(calendar.bookings);
  const starts = new Set<number>();
  // A working range of the previous local date can still produce instants inside [lower, upper).
  const lastDay = localDayNumber(zone, upper);
  for (let day = localDayNumber(zone, lower) - 1; day <= lastDay; day++) {
    const date = isoDateOfDay(day);
    if (disabledDays.has(date) || disabledMonths.has(Number(date.slice(5, 7)))) continue;
    const weekday = WEEKDAYS[weekdayIndexOfDay(day)];
    const toInstant = wallConverterForDay(zone, day);
    for (const range of weekday ? calendar.weeklyHours[weekday] : []) {
      const startMin = minutesOfDay(range.start);
      const endMin = minutesOfDay(range.end);
      const rangeEnd = toInstant(day * DAY_MS + endMin * MINUTE_MS).ms;
      for (let m = startMin; m + duration <= endMin; m += duration) {
        const candidate = toInstant(day * DAY_MS + m * MINUTE_MS);
        const start = candidate.ms;
        if (!candidate.exists || start < lower || start >= upper || start + durationMs > rangeEnd) continue;
        if (!clashes(start - beforeMs, start + durationMs + afterMs)) starts.add(start);
      }
    }
  }
  return [...starts].sort((a, b) => a - b);
}

/** 'YYYY-MM-DDTHH:mm:ssZ', the key format of slot_list. */
export function slotKey(ms: number): string {
  const iso = new Date(ms).toISOString();
  // 'YYYY-MM-DDTHH:mm:ss.sssZ' (24 characters) for the years 0–9999, cut without a regular expression; a year
  // written with a sign (+010000, -000001) keeps its own length.
  return iso.length === 24 ? `${iso.slice(0, 19)}Z` : iso.replace(/\.\d{3}Z$/, 'Z');
}
