// Builds the overview (section 2.3) and slot list (section 2.4) payloads from the slot rule, in the guest's zone.
import type { OwnerCalendar } from './schedule.js';
import {
  addDays,
  bookableSlotStarts,
  horizonEndMs,
  localDateOf,
  slotKey,
  startOfLocalDateMs,
} from './schedule.js';
import type { OverviewQuery, SlotsQuery } from './calendar-query.js';
import type { SimEventType } from './types.js';
import { WEEKDAYS } from './types.js';

export interface OverviewPayload {
  timezone: string;
  availability: {
    disabled_dates: { days: string[]; months: (number | string)[] };
    first_available_date: string | null;
    weekly: { week_days: Record<string, boolean> };
    last_available_date: string | null;
    available_dates: string[];
  };
}

export interface SlotListPayload {
  timezone: string;
  booking_type: string;
  slot_list: Record<string, Record<string, never>>;
}

/**
 * Where the service description is silent we chose: first_available_date is the first date with a slot from
 * start_date on (up to the horizon) and, because the description types it as a non-null string, falls back to
 * start_date when there is none; last_available_date is the last date with a slot within the horizon, or null.
 */
export function buildOverview(
  calendar: OwnerCalendar,
  event: SimEventType,
  query: OverviewQuery,
  nowMs: number,
): OverviewPayload {
  const zone = query.timezone;
  const rangeStart = startOfLocalDateMs(query.startDate, zone);
  const rangeEnd = startOfLocalDateMs(query.endDate, zone);
  const guestDates = (starts: number[]) => [...new Set(starts.map((ms) => localDateOf(ms, zone)))];
  // One scan of the slot rule for all three answers: every start it gives is after now and before the horizon,
  // so the range's starts, the first from the range's start and the last from now are all within this one list.
  const horizonEnd = horizonEndMs(calendar, event, nowMs);
  const every = bookableSlotStarts(
    calendar,
    event,
    Math.min(rangeStart, nowMs),
    Math.max(rangeEnd, horizonEnd),
    nowMs,
  );
  const available = guestDates(every.filter((ms) => ms >= rangeStart && ms < rangeEnd));
  const first = every.find((ms) => ms >= rangeStart);
  const last = every[every.length - 1];
  const weekDays: Record<string, boolean> = {};
  for (const day of WEEKDAYS) weekDays[day] = calendar.weeklyHours[day].length > 0;
  return {
    timezone: zone,
    availability: {
      disabled_dates: {
        days: calendar.disabledDays.filter((d) => d >= query.startDate && d < query.endDate),
        months: [...calendar.disabledMonths].sort((a, b) => a - b),
      },
      first_available_date: first === undefined ? query.startDate : localDateOf(first, zone),
      weekly: { week_days: weekDays },
      last_available_date: last === undefined ? null : localDateOf(last, zone),
      available_dates: available,
    },
  };
}

export function buildSlotList(
  calendar: OwnerCalendar,
  event: SimEventType,
  query: SlotsQuery,
  nowMs: number,
): SlotListPayload {
  const from = startOfLocalDateMs(query.date, query.timezone);
  const to = startOfLocalDateMs(addDays(query.date, 1), query.timezone);
  const slotList: Record<string, Record<string, never>> = {};
  for (const start of bookableSlotStarts(calendar, event, from, to, nowMs)) slotList[slotKey(start)] = {};
  return { timezone: query.timezone, booking_type: event.payload.booking_type, slot_list: slotList };
}
