// The slot rule (schedule.ts) and the overview built on it (calendar-payloads.ts) against the rule written the
// plain way: each candidate checked against every booking, each offset asked of Intl with nothing remembered, and
// the overview's first and last dates from scans of their own. The simulator remembers offsets per UTC hour, finds
// clashing bookings by a binary search and scans once per overview, for speed (the demo's history); this holds
// those to the same answers on generated calendars in zones whose clocks change (by an hour, by half an hour, at
// odd minutes past UTC hours), across their changes, with bookings, buffers, disabled dates and moving clocks.
import { describe, expect, it } from '@jest/globals';
import { buildOverview } from '../../src/simulator/calendar-payloads.js';
import { bookableSlotStarts, slotKey, type OwnerCalendar } from '../../src/simulator/schedule.js';
import { WEEKDAYS, type SimBooking, type SimEventType, type WeeklyHours } from '../../src/simulator/types.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const offsetFormats = new Map<string, Intl.DateTimeFormat>();
/** The zone's offset in minutes at `ms`, from Intl's wall fields. */
function intlOffset(zone: string, ms: number): number {
  let format = offsetFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    offsetFormats.set(zone, format);
  }
  const part = (parts: Intl.DateTimeFormatPart[], type: string) =>
    Number(parts.find((p) => p.type === type)?.value);
  const parts = format.formatToParts(new Date(ms));
  const wall = Date.UTC(
    part(parts, 'year'),
    part(parts, 'month') - 1,
    part(parts, 'day'),
    part(parts, 'hour'),
    part(parts, 'minute'),
    part(parts, 'second'),
  );
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / MINUTE_MS);
}

/** A wall time's instant: the earlier of a repeated one; a skipped one where a clock lands. */
function wallToInstant(zone: string, wallMs: number): { ms: number; exists: boolean } {
  const before = intlOffset(zone, wallMs - DAY_MS);
  const after = intlOffset(zone, wallMs + DAY_MS);
  const found = [before, after]
    .map((offset) => wallMs - offset * MINUTE_MS)
    .filter((candidate) => candidate + intlOffset(zone, candidate) * MINUTE_MS === wallMs)
    .sort((a, b) => a - b)[0];
  return found === undefined
    ? { ms: wallMs - before * MINUTE_MS, exists: false }
    : { ms: found, exists: true };
}

const localDay = (zone: string, ms: number) => Math.floor((ms + intlOffset(zone, ms) * MINUTE_MS) / DAY_MS);
const isoDate = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

function referenceStarts(
  calendar: OwnerCalendar,
  event: SimEventType,
  fromMs: number,
  toMs: number,
  nowMs: number,
): number[] {
  if (!event.payload.enabled) return [];
  const zone = calendar.timezone;
  const horizonEnd = wallToInstant(zone, (localDay(zone, nowMs) + event.maxDaysAhead + 1) * DAY_MS).ms;
  const lower = Math.max(fromMs, nowMs + 1);
  const upper = Math.min(toMs, horizonEnd);
  const duration = event.payload.duration_minutes;
  const starts = new Set<number>();
  for (let day = localDay(zone, lower) - 1; day <= localDay(zone, upper); day++) {
    const date = isoDate(day);
    if (calendar.disabledDays.includes(date) || calendar.disabledMonths.includes(Number(date.slice(5, 7))))
      continue;
    for (const range of calendar.weeklyHours[WEEKDAYS[(((day + 3) % 7) + 7) % 7]!]) {
      const rangeEnd = wallToInstant(zone, day * DAY_MS + minutes(range.end) * MINUTE_MS).ms;
      for (let m = minutes(range.start); m + duration <= minutes(range.end); m += duration) {
        const candidate = wallToInstant(zone, day * DAY_MS + m * MINUTE_MS);
        const start = candidate.ms;
        if (!candidate.exists || start < lower || start >= upper || start + duration * MINUTE_MS > rangeEnd)
          continue;
        const from = start - event.payload.buffer_before_minutes * MINUTE_MS;
        const to = start + (duration + event.payload.buffer_after_minutes) * MINUTE_MS;
        if (!calendar.bookings.some((b) => b.startMs < to && from < b.endMs)) starts.add(start);
      }
    }
  }
  return [...starts].sort((a, b) => a - b);
}

/** A small deterministic generator (mulberry32), so that a failure names a case that comes again. */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (below: number) => Math.floor(next() * below);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { int, pick };
}

const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe',
  'America/St_Johns',
  'Asia/Kolkata',
  'Atlantic/Azores',
  'Pacific/Chatham',
  'UTC',
];
const hhmm = (m: number) =>
  `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

function generatedCase(seed: number) {
  const { int, pick } = generator(seed);
  const timezone = pick(ZONES);
  const duration = pick([15, 20, 30, 45, 60, 90]);
  const weeklyHours = Object.fromEntries(
    WEEKDAYS.map((day) => {
      // Ranges of a day in order, never overlapping; one may run to 24:00 or start at 00:00.
      const ranges = [];
      let at = int(3) === 0 ? 0 : int(12) * 60 + pick([0, 15, 30]);
      for (let n = int(3); n > 0 && at < 23 * 60; n--) {
        const end = Math.min(24 * 60, at + (1 + int(6)) * 60);
        ranges.push({ start: hhmm(at), end: hhmm(end) });
        at = end + int(3) * 60;
      }
      return [day, ranges];
    }),
  ) as WeeklyHours;
  // Around the year's clock changes in either hemisphere: late March, early April, late September to early
  // November.
  const nowMs = Date.UTC(2026, pick([2, 3, 8, 9, 10]), 1 + int(28), int(24), pick([0, 7, 30, 59]));
  const bookings: SimBooking[] = Array.from({ length: int(40) }, () => {
    const startMs = nowMs + int(40 * 24 * 4) * 15 * MINUTE_MS;
    return { eventId: 'evt', startMs, endMs: startMs + (1 + int(8)) * 15 * MINUTE_MS };
  });
  const disabledDays = Array.from({ length: int(4) }, () => isoDate(Math.floor(nowMs / DAY_MS) + int(30)));
  const calendar: OwnerCalendar = {
    timezone,
    weeklyHours,
    disabledDays,
    disabledMonths: int(5) === 0 ? [1 + int(12)] : [],
    bookings,
  };
  const event: SimEventType = {
    maxDaysAhead: 5 + int(40),
    payload: {
      event_id: 'evt',
      title: 'Call',
      booking_type: 'single',
      color: '#000000',
      description: '',
      duration_minutes: duration,
      enabled: int(10) !== 0,
      is_team: false,
      location: { type: 'none', value: '' },
      buffer_after_minutes: pick([0, 0, 5, 15]),
      buffer_before_minutes: pick([0, 0, 10, 30]),
      is_secret: false,
      redirect_url: '',
      url: '',
    },
  };
  const startDay = Math.floor(nowMs / DAY_MS) - 3 + int(20);
  const query = {
    startDate: isoDate(startDay),
    endDate: isoDate(startDay + 1 + int(30)),
    timezone: pick(ZONES),
  };
  return { calendar, event, nowMs, query };
}

describe('the slot rule against the rule written plainly', () => {
  it('gives the same starts for 300 generated calendars, each asked for several ranges', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const { calendar, event, nowMs } = generatedCase(seed);
      for (const [from, to] of [
        [nowMs - DAY_MS, nowMs + 3 * DAY_MS],
        [nowMs, nowMs + 60 * DAY_MS],
        [nowMs + 5 * DAY_MS + 7 * 3_600_000, nowMs + 6 * DAY_MS],
      ] as const) {
        expect({ seed, from, starts: bookableSlotStarts(calendar, event, from, to, nowMs) }).toEqual({
          seed,
          from,
          starts: referenceStarts(calendar, event, from, to, nowMs),
        });
      }
    }
  });

  it("gives the same starts across clock changes in the middle of a UTC hour (St. John's, Lord Howe)", () => {
    // St. John's moves at 05:30Z (forward, 8 March) and 04:30Z (back, 1 November); Lord Howe by half an hour at
    // 15:30Z (forward, 3 October) and 14:30Z (back, 4 April): an hour whose offset changes half way, where an
    // offset remembered for the whole hour would be wrong for one half of it.
    const changes = [
      ['America/St_Johns', Date.UTC(2026, 2, 5)],
      ['America/St_Johns', Date.UTC(2026, 9, 29)],
      ['Australia/Lord_Howe', Date.UTC(2026, 9, 1)],
      ['Australia/Lord_Howe', Date.UTC(2026, 3, 1)],
    ] as const;
    for (const [timezone, nowMs] of changes) {
      const weeklyHours = Object.fromEntries(
        WEEKDAYS.map((day) => [day, [{ start: '00:00', end: '05:00' }]]),
      ) as WeeklyHours;
      const calendar: OwnerCalendar = {
        timezone,
        weeklyHours,
        disabledDays: [],
        disabledMonths: [],
        bookings: [],
      };
      const { event } = generatedCase(7);
      const fifteen: SimEventType = {
        maxDaysAhead: 30,
        payload: {
          ...event.payload,
          enabled: true,
          duration_minutes: 15,
          buffer_after_minutes: 0,
          buffer_before_minutes: 0,
        },
      };
      const to = nowMs + 10 * DAY_MS;
      const starts = bookableSlotStarts(calendar, fifteen, nowMs, to, nowMs);
      expect({ timezone, starts }).toEqual({
        timezone,
        starts: referenceStarts(calendar, fifteen, nowMs, to, nowMs),
      });
    }
  });

  it('writes slot keys as the API does, for any year', () => {
    for (const ms of [Date.UTC(2026, 0, 2, 9, 30), 0, Date.UTC(10_000, 0, 2, 9), Date.UTC(-1, 0, 2, 9)])
      expect(slotKey(ms)).toBe(new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'));
  });

  it("gives each overview's dates, first and last as scans of their own do", () => {
    for (let seed = 1001; seed <= 1200; seed++) {
      const { calendar, event, nowMs, query } = generatedCase(seed);
      const zone = query.timezone;
      const dayStart = (date: string) => wallToInstant(zone, Date.parse(`${date}T00:00:00Z`)).ms;
      const guestDate = (ms: number) => isoDate(localDay(zone, ms));
      const horizon = nowMs + 400 * DAY_MS;
      const inRange = referenceStarts(
        calendar,
        event,
        dayStart(query.startDate),
        dayStart(query.endDate),
        nowMs,
      );
      const fromStart = referenceStarts(calendar, event, dayStart(query.startDate), horizon, nowMs);
      const fromNow = referenceStarts(calendar, event, nowMs, horizon, nowMs);
      const { availability } = buildOverview(calendar, event, query, nowMs);
      expect({
        seed,
        available: availability.available_dates,
        first: availability.first_available_date,
        last: availability.last_available_date,
      }).toEqual({
        seed,
        available: [...new Set(inRange.map(guestDate))],
        first: fromStart[0] === undefined ? query.startDate : guestDate(fromStart[0]),
        last: fromNow.length === 0 ? null : guestDate(fromNow[fromNow.length - 1]!),
      });
    }
  });
});
