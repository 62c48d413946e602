// In-process control of a running simulator; the /__sim/ routes are a thin HTTP skin over the same object. Every
// operation that changes the world tells ctx.stateChanged(), so a state file keeps it (grants tell it themselves).
import { z } from 'zod';
import { bookSlot, calendarOf, findEventType, freeSlot, parseInstant } from './bookings.js';
import type { SimContext } from './context.js';
import { bookableSlotStarts, minutesOfDay, slotKey } from './schedule.js';
import type { EventTypePayload, SimUser, SimUserDetails, SimulatorControl, WeeklyHours } from './types.js';
import { SimulatorControlError, WEEKDAYS } from './types.js';

const clockTime = z
  .string()
  .regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'times are HH:mm (24:00 allowed as an end)');
const rangeList = z
  .array(z.strictObject({ start: clockTime, end: clockTime }))
  .refine(
    (ranges) => ranges.every((r) => minutesOfDay(r.start) < minutesOfDay(r.end)),
    'start must be before end',
  )
  .refine((ranges) => {
    const sorted = [...ranges].sort((a, b) => minutesOfDay(a.start) - minutesOfDay(b.start));
    return sorted.every(
      (r, i) => i === 0 || minutesOfDay(sorted[i - 1]?.end ?? '00:00') <= minutesOfDay(r.start),
    );
  }, 'ranges of one day must not overlap');
const weeklyHoursSchema = z.strictObject(Object.fromEntries(WEEKDAYS.map((d) => [d, rangeList.optional()])));

const isoDate = z.iso.date();
const disabledDatesSchema = z.strictObject({
  days: z.array(isoDate).optional(),
  months: z.array(z.number().int().min(1).max(12)).optional(),
});

const minutes = z.number().int().min(0).max(1440);
const eventPatchSchema = z.strictObject({
  title: z.string().optional(),
  booking_type: z.string().optional(),
  color: z.string().optional(),
  description: z.string().optional(),
  duration_minutes: z.number().int().min(1).max(1440).optional(),
  enabled: z.boolean().optional(),
  is_team: z.boolean().optional(),
  location: z.strictObject({ type: z.string(), value: z.string() }).optional(),
  buffer_after_minutes: minutes.optional(),
  buffer_before_minutes: minutes.optional(),
  is_secret: z.boolean().optional(),
  redirect_url: z.string().optional(),
  url: z.string().optional(),
  max_days_ahead: z.number().int().min(0).max(3650).optional(),
});

function parseOrThrow<T>(schema: z.ZodType<T>, input: unknown, what: string): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success)
    throw new SimulatorControlError(400, `invalid ${what}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

function userDetails(user: SimUser): SimUserDetails {
  return {
    id: user.id,
    email: user.profile.email,
    name: user.profile.name,
    timezone: user.profile.timezone,
    profile: structuredClone(user.profile),
    event_types: user.eventTypes.map((e) => structuredClone(e.payload)),
    weekly_hours: structuredClone(user.weeklyHours),
    disabled_days: [...user.disabledDays],
    disabled_months: [...user.disabledMonths],
    max_days_ahead: Object.fromEntries(user.eventTypes.map((e) => [e.payload.event_id, e.maxDaysAhead])),
    bookings: user.bookings.map((b) => ({
      event_id: b.eventId,
      start: slotKey(b.startMs),
      end: slotKey(b.endMs),
    })),
  };
}

export function createSimulatorControl(ctx: SimContext): SimulatorControl {
  const userById = (userId: string): SimUser => {
    const user = ctx.users.find((u) => u.id === userId);
    if (!user) throw new SimulatorControlError(404, 'unknown user');
    return user;
  };
  const ownEvent = (userId: string, eventId: string) => {
    const user = userById(userId);
    const index = user.eventTypes.findIndex((e) => e.payload.event_id === eventId);
    const event = user.eventTypes[index];
    if (!event) throw new SimulatorControlError(404, 'unknown event type for this user');
    return { user, index, event };
  };

  return {
    listUsers: () => ctx.users.map(userDetails),
    book(eventId, startIso) {
      const atMs = ctx.clock.nowMs();
      const { userId, booking } = bookSlot(ctx.users, eventId, startIso, atMs);
      ctx.changes.record({ kind: 'booked', userId, ...booking, atMs });
      ctx.stateChanged();
    },
    free(eventId, startIso) {
      const { userId, booking } = freeSlot(ctx.users, eventId, startIso);
      ctx.changes.record({ kind: 'freed', userId, ...booking, atMs: ctx.clock.nowMs() });
      ctx.stateChanged();
    },
    changes: () => ctx.changes.list(),
    setWeeklyHours(userId, hours) {
      const user = userById(userId);
      const parsed = parseOrThrow(weeklyHoursSchema, hours, 'weekly hours');
      const next = {} as WeeklyHours;
      for (const day of WEEKDAYS) {
        const ranges = parsed[day] ?? [];
        next[day] = [...ranges].sort((a, b) => minutesOfDay(a.start) - minutesOfDay(b.start));
      }
      user.weeklyHours = next;
      ctx.stateChanged();
    },
    setDisabledDates(userId, disabled) {
      const user = userById(userId);
      const parsed = parseOrThrow(disabledDatesSchema, disabled, 'disabled dates');
      if (parsed.days) user.disabledDays = [...new Set(parsed.days)].sort();
      if (parsed.months) user.disabledMonths = [...new Set(parsed.months)].sort((a, b) => a - b);
      ctx.stateChanged();
    },
    updateEventType(userId, eventId, patch) {
      const { event } = ownEvent(userId, eventId);
      const { max_days_ahead: maxDaysAhead, ...fields } = parseOrThrow(
        eventPatchSchema,
        patch,
        'event type patch',
      );
      Object.assign(event.payload, fields as Partial<EventTypePayload>);
      if (maxDaysAhead !== undefined) event.maxDaysAhead = maxDaysAhead;
      ctx.stateChanged();
      return structuredClone(event.payload);
    },
    deleteEventType(userId, eventId) {
      const { user, index } = ownEvent(userId, eventId);
      user.eventTypes.splice(index, 1);
      ctx.stateChanged();
    },
    revokeGrants: (userId) => ctx.grants.revokeUserGrants(userById(userId).id),
    setFaults: (patch) => ctx.faults.update(patch),
    getFaults: () => ctx.faults.settings(),
    setClock: (iso) => ctx.clock.set(parseInstant(iso, 'now')),
    advanceClock(seconds) {
      if (typeof seconds !== 'number' || !Number.isFinite(seconds)) {
        throw new SimulatorControlError(400, 'seconds must be a finite number');
      }
      ctx.clock.advance(seconds);
    },
    now: () => new Date(ctx.clock.nowMs()),
    callCounts: () => ctx.calls.totals(),
    callCountsByUser: () => ctx.calls.byUser(),
    callArrivals: () => ctx.calls.arrivals(),
    resetCallCounts: () => ctx.calls.reset(),
    slotsFor(eventId, fromIso, toIso) {
      const found = findEventType(ctx.users, eventId);
      if (!found) throw new SimulatorControlError(404, 'unknown event type');
      const from = parseInstant(fromIso, 'from');
      const to = parseInstant(toIso, 'to');
      return bookableSlotStarts(calendarOf(found.user), found.event, from, to, ctx.clock.nowMs()).map(
        slotKey,
      );
    },
  };
}
