// Puts a simulated user into a known state so slot expectations can be written down exactly.
import type { RunningSimulator, WeeklyHours } from '../../src/simulator/index.js';

export interface ExactEventSetup {
  hours: Partial<WeeklyHours>;
  durationMinutes: number;
  bufferBefore?: number;
  bufferAfter?: number;
  maxDaysAhead?: number;
}

/** Clears the user's disabled dates and bookings, sets hours, and shapes their first event type; returns its id. */
export function exactEvent(sim: RunningSimulator, userIndex: number, setup: ExactEventSetup): string {
  const user = sim.control.listUsers()[userIndex];
  const eventId = user?.event_types[0]?.event_id;
  if (!user || !eventId) throw new Error(`no user ${userIndex}`);
  for (const booking of user.bookings) sim.control.free(booking.event_id, booking.start);
  sim.control.setDisabledDates(user.id, { days: [], months: [] });
  sim.control.setWeeklyHours(user.id, setup.hours);
  sim.control.updateEventType(user.id, eventId, {
    enabled: true,
    duration_minutes: setup.durationMinutes,
    buffer_before_minutes: setup.bufferBefore ?? 0,
    buffer_after_minutes: setup.bufferAfter ?? 0,
    max_days_ahead: setup.maxDaysAhead ?? 60,
  });
  return eventId;
}

export const everyDay = (start: string, end: string): WeeklyHours => {
  const ranges = () => [{ start, end }];
  return {
    mon: ranges(),
    tue: ranges(),
    wed: ranges(),
    thu: ranges(),
    fri: ranges(),
    sat: ranges(),
    sun: ranges(),
  };
};
