// Benchmark: fixed schedule versus bands and adaptation, at 10,000 connections, the same call budget and the
// same bookings. Hours of booking activity run in minutes because time is virtual: the simulator's clock is
// driven by this loop (a compressed clock taken to its limit), and the scheduler's code runs on the same
// injected clock. What runs for real: the simulator's accounts, slot rule and booking log (bookings are made
// through its control API and recorded with their time), the scheduler's budget allocation (allocateCalls
// with the Redis call budget), the band schedule and its adaptation (scheduleAfterPull), and the worker's
// cutting of a pull into bands, dates and overview windows. What is counted, not sent: each pull's upstream
// calls, by the API's own rule (2 + per event type and band: windows + available dates), with a date available
// when the account works that weekday, has not disabled it and the event type books that far ahead.
//
// Staleness = when a pull that covers the booked slot's date ran − when the simulator recorded the booking;
// a pull is taken to commit at its tick (a real sync adds its own second or two; see the sync round).
import { DateTime } from 'luxon';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { derivePrng, startSimulator, type Prng } from '../../src/simulator/index.js';
import { WEEKDAYS, type WeeklyHours } from '../../src/simulator/types.js';
import {
  bandsWithin,
  parseCadenceBands,
  type AdaptBounds,
  type CadenceBand,
} from '../../src/config/sync-bands.js';
import { readBandState, scheduleAfterPull, type BandState } from '../../src/sync/band-schedule.js';
import { allocateCalls, createRedisCallBudget } from '../../src/sync/call-budget.js';
import { ACCOUNT_CALLS, accountReadDue, segmentCalls, segmentMode } from '../../src/sync/pull-plan.js';
import { datesByBand, spanOf } from '../../src/sync/cadence-bands.js';
import { DATE_BANDS, dateBandOf, type DateBand } from '../../src/lib/date-bands.js';
import { horizonFrom, windowsCovering, type Horizon } from '../../src/sync/horizon-windows.js';
import { check, type BenchSection } from './bench-result.js';
import { FRONTIER_INPUTS } from './frontier.js';

export interface FreshnessOptions {
  connections: number;
  /** Upstream calls per second both schedules get (SYNC_CALL_BUDGET_PER_SECOND). */
  budgetPerSecond: number;
  warmupHours: number;
  measureHours: number;
  /** Mean bookings per connection per day (activity differs widely between accounts: log-normal). */
  bookingsPerDay: number;
  /**
   * The accounts' weekly hours: the simulator's own five templates (default), or realistic ones (issue 38: most
   * Monday to Friday, some six days, some night shifts across midnight), where guests book the earliest open
   * days (a lead counted in days with an open slot, not calendar days).
   */
  hours?: 'simulator' | 'realistic';
  /**
   * SYNC_BANDS whose bands the bookings are also grouped by, each by its date's rank among the dates open when it
   * was booked (0-1: the first two days people could book), by the weekday it was booked on: the same days for
   * every schedule measured, whatever bands the schedule itself pulls (ScheduleResult.byOpenBand).
   */
  openRankBands?: string;
}

const HORIZON_DAYS = 28;
const EVENT_TYPES = 3;
const TICK_SECONDS = 30;
const START = Date.parse('2026-04-06T00:00:00Z');
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface Schedule {
  name: string;
  bands: string;
  adapt: AdaptBounds;
  /** SYNC_ACCOUNT_INTERVAL in seconds. */
  accountIntervalSeconds: number;
  /**
   * What the bands count: the days people can book (the worker's, since issue 38: dates with an open slot, the
   * others by calendar distance), or calendar days (the bands before it). Default: bookable.
   */
  counting?: 'bookable' | 'calendar';
}

/**
 * The reference: the fixed schedule as every sync pulled before issue 30, everything every 15 minutes, the
 * account read by every pull (an interval of 1 minute is shorter than any pull's; one band of 28 dates is
 * never cheaper asked for directly, so every date goes through the overview as before).
 */
export const FIXED: Schedule = {
  name: '*=15m (1,1; account 1m)',
  bands: '*=15m',
  adapt: { fastest: 1, slowest: 1 },
  accountIntervalSeconds: 60,
};

interface Account {
  userId: string;
  zone: string;
  eventTypes: { id: string; maxDaysAhead: number }[];
  /** Weekday indexes (0 = Monday) with working hours. */
  workdays: Set<number>;
  /** By weekday index, the minute of the day the last working range ends (-1: none). */
  lastEndMinute: number[];
  disabledDays: Set<string>;
  disabledMonths: Set<number>;
}

interface Booking {
  userIndex: number;
  atMs: number;
  startMs: number;
  /** The slot's date in the account's zone. */
  date: string;
  band: DateBand;
  /** Its date's rank among the dates open when it was booked (0: the first day people could book); -1: none. */
  openRank: number;
  /** The weekday (0 = Monday) it was booked on, in the account's zone. */
  bookedWeekday: number;
}

/** The accounts and one booking history, made once through the simulator and replayed for each schedule. */
export interface World {
  accounts: Account[];
  bookings: Booking[];
}

export function bandsOf(text: string): CadenceBand[] {
  const parsed = parseCadenceBands(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.bands;
}

/** Log-normal activity with the given mean: most accounts are quiet, a few busy. */
export function activityRate(prng: Prng, mean: number): number {
  const sigma = 1.2;
  const u1 = Math.max(prng.next(), 1e-12);
  const u2 = prng.next();
  const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return mean * Math.exp(sigma * normal - (sigma * sigma) / 2);
}

/** Days ahead a guest books: most within the next few days (P(d) ∝ 0.7^d). */
export function leadDays(prng: Prng): number {
  let d = 0;
  while (d < HORIZON_DAYS - 1 && prng.next() < 0.7) d++;
  return d;
}

export async function makeWorld(options: FreshnessOptions): Promise<World> {
  let nowMs = START;
  const sim = await startSimulator({
    now: () => new Date(nowMs),
    users: options.connections,
    eventTypesPerUser: EVENT_TYPES,
    seed: 19,
  });
  try {
    const prng = derivePrng(19, 'freshness-bench');
    if (options.hours === 'realistic') {
      const hoursPrng = derivePrng(19, 'freshness-bench-hours');
      for (const u of sim.control.listUsers()) sim.control.setWeeklyHours(u.id, realisticHours(hoursPrng));
    }
    const users = sim.control.listUsers();
    const accounts: Account[] = users.map((u) => ({
      userId: u.id,
      zone: u.timezone,
      eventTypes: u.event_types.map((e) => ({
        id: e.event_id,
        maxDaysAhead: u.max_days_ahead[e.event_id] ?? 60,
      })),
      workdays: new Set(WEEKDAYS.flatMap((day, i) => ((u.weekly_hours[day] ?? []).length > 0 ? [i] : []))),
      lastEndMinute: WEEKDAYS.map((day) =>
        Math.max(-1, ...(u.weekly_hours[day] ?? []).map((r) => minuteOf(r.end))),
      ),
      disabledDays: new Set(u.disabled_days),
      disabledMonths: new Set(u.disabled_months),
    }));
    const endMs = START + (options.warmupHours + options.measureHours) * HOUR_MS;
    const times: { atMs: number; userIndex: number }[] = [];
    accounts.forEach((_, userIndex) => {
      const perMs = activityRate(prng, options.bookingsPerDay) / DAY_MS;
      for (let t = START - Math.log(Math.max(prng.next(), 1e-12)) / perMs; t < endMs;) {
        times.push({ atMs: Math.round(t), userIndex });
        t -= Math.log(Math.max(prng.next(), 1e-12)) / perMs;
      }
    });
    times.sort((a, b) => a.atMs - b.atMs);
    const bookings: Booking[] = [];
    for (const { atMs, userIndex } of times) {
      nowMs = atMs; // the simulator's clock: the booking is recorded at this time
      const account = accounts[userIndex]!;
      const eventType = prng.pick(account.eventTypes);
      const today = DateTime.fromMillis(atMs, { zone: account.zone }).startOf('day');
      const offeredOn = (day: DateTime) =>
        sim.control.slotsFor(eventType.id, day.toUTC().toISO()!, day.plus({ days: 1 }).toUTC().toISO()!);
      let offered: string[] = [];
      if (options.hours === 'realistic') {
        // The lead counts days with an open slot: people book the earliest days they can.
        let left = leadDays(prng);
        for (let ahead = 0; ahead < HORIZON_DAYS; ahead++) {
          const found = offeredOn(today.plus({ days: ahead }));
          if (found.length > 0 && left-- === 0) {
            offered = found;
            break;
          }
        }
      } else {
        offered = offeredOn(today.plus({ days: leadDays(prng) }));
      }
      if (offered.length === 0) continue;
      const start = prng.pick(offered);
      sim.control.book(eventType.id, start);
    }
    // The simulator's own record is the ground truth of when each change happened.
    const userIndexById = new Map(accounts.map((a, i) => [a.userId, i]));
    for (const change of sim.control.changes()) {
      if (change.kind !== 'booked') continue;
      const userIndex = userIndexById.get(change.userId)!;
      const account = accounts[userIndex]!;
      const date = DateTime.fromMillis(change.startMs, { zone: account.zone }).toISODate()!;
      const open = openDatesAt(
        account,
        horizonFrom(new Date(change.atMs), account.zone, HORIZON_DAYS),
        change.atMs,
      );
      bookings.push({
        userIndex,
        atMs: change.atMs,
        startMs: change.startMs,
        date,
        band: dateBandOf(new Date(change.startMs), new Date(change.atMs)),
        openRank: [...open].sort().indexOf(date),
        bookedWeekday: DateTime.fromMillis(change.atMs, { zone: account.zone }).weekday - 1,
      });
    }
    return { accounts, bookings };
  } finally {
    await sim.close();
  }
}

function weekdayIndex(date: string): number {
  return (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7;
}

const minuteOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

const range = (start: string, end: string) => ({ start, end });
const week = (days: readonly string[], ranges: { start: string; end: string }[]): WeeklyHours =>
  Object.fromEntries(WEEKDAYS.map((day) => [day, days.includes(day) ? ranges : []])) as WeeklyHours;
const MON_FRI = ['mon', 'tue', 'wed', 'thu', 'fri'];

/**
 * Realistic weekly hours (issue 38): seven in ten accounts Monday to Friday (office hours of a few shapes), two
 * in ten six days (Monday to Saturday, or Tuesday to Sunday), one in ten night shifts across midnight (evenings
 * Monday to Friday running into the early hours of Tuesday to Saturday).
 */
export function realisticHours(prng: Prng): WeeklyHours {
  const draw = prng.next();
  if (draw < 0.7) {
    return prng.pick([
      () => week(MON_FRI, [range('09:00', '12:00'), range('13:00', '17:00')]),
      () => week(MON_FRI, [range('08:00', '16:00')]),
      () => week(MON_FRI, [range('10:00', '13:00'), range('14:00', '18:30')]),
    ])();
  }
  if (draw < 0.9) {
    return prng.pick([
      () => week([...MON_FRI, 'sat'], [range('08:30', '12:30'), range('14:00', '18:00')]),
      () => week(['tue', 'wed', 'thu', 'fri', 'sat', 'sun'], [range('11:00', '19:00')]),
    ])();
  }
  const evening = week(MON_FRI, [range('20:00', '24:00')]);
  const early = week(['tue', 'wed', 'thu', 'fri', 'sat'], [range('00:00', '03:00')]);
  return Object.fromEntries(WEEKDAYS.map((day) => [day, [...early[day], ...evening[day]]])) as WeeklyHours;
}

/**
 * The horizon's dates an account can be booked on at `nowMs`, as the store's open slots say them (what the
 * worker counts bands in): a date it works, has not disabled and some event type books that far ahead; today
 * only while a working range is still to end. (Nothing here is ever fully booked: a booking takes one slot.)
 */
function openDatesAt(account: Account, horizon: Horizon, nowMs: number): Set<string> {
  const local = DateTime.fromMillis(nowMs, { zone: account.zone });
  const nowMinute = local.hour * 60 + local.minute;
  const furthest = Math.max(...account.eventTypes.map((e) => e.maxDaysAhead));
  return new Set(
    horizon.dates.filter((date, ahead) => {
      const weekday = weekdayIndex(date);
      return (
        ahead <= furthest &&
        account.workdays.has(weekday) &&
        !account.disabledDays.has(date) &&
        !account.disabledMonths.has(Number(date.slice(5, 7))) &&
        (ahead > 0 || account.lastEndMinute[weekday]! > nowMinute)
      );
    }),
  );
}

/**
 * What pulling `dates` of one band costs, by the API's rule and the worker's plan (pull-plan.ts), without the
 * account's calls: per event type, through the overview (its windows and the available dates), or for a
 * scheduled pull directly (every date) when the store knows that is fewer calls. What the store knows is
 * taken to be the truth here: a date is known available when the account works that weekday, has not disabled
 * it and the event type books that far ahead.
 */
function bandCalls(
  account: Account,
  dates: readonly string[],
  today: string,
  windows: number,
  whole: boolean,
  open: ReadonlySet<string>,
): number {
  const todayMs = Date.parse(`${today}T00:00:00Z`);
  let calls = 0;
  for (const eventType of account.eventTypes) {
    const available = dates.filter((date) => {
      const ahead = (Date.parse(`${date}T00:00:00Z`) - todayMs) / DAY_MS;
      return ahead <= eventType.maxDaysAhead && open.has(date);
    }).length;
    const mode = whole ? 'overview' : segmentMode(dates.length, windows, available);
    calls += segmentCalls(mode, dates.length, windows, available);
  }
  return calls;
}

/** A min-heap of connection indexes by next sync time. */
class DueHeap {
  private items: { at: number; index: number }[] = [];
  push(at: number, index: number) {
    const items = this.items;
    items.push({ at, index });
    for (let i = items.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.at <= items[i]!.at) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  }
  popDue(now: number, limit: number): { at: number; index: number }[] {
    const out: { at: number; index: number }[] = [];
    while (out.length < limit && this.items.length > 0 && this.items[0]!.at <= now) {
      const items = this.items;
      out.push(items[0]!);
      const last = items.pop()!;
      if (items.length > 0) {
        items[0] = last;
        for (let i = 0; ;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < items.length && items[l]!.at < items[m]!.at) m = l;
          if (r < items.length && items[r]!.at < items[m]!.at) m = r;
          if (m === i) break;
          [items[m], items[i]] = [items[i]!, items[m]!];
          i = m;
        }
      }
    }
    return out;
  }
}

export interface ScheduleResult {
  callsPerConnectionHour: number;
  /** Pulls (syncs) per connection per measured hour, what the capacity model multiplies per-sync costs by (the counted run's). */
  syncsPerConnectionHour?: number;
  staleness: Record<DateBand, number[]>;
  unseen: number;
  /** Most calls planned in one minute, as a share of the budget's minute. */
  peakMinuteShare: number;
  /** Pulls of each cadence band in the measured hours (a band with none stopped). */
  pullsByBand: Record<string, number>;
  /**
   * Staleness of bookings on the first two days people could book when they were made, by the weekday they
   * were made on (0 = Monday, in the account's zone), sorted. (The counted run's; the real-sync run has none.)
   */
  firstTwoOpenDays?: number[][];
  /** By band of openRankBands (its name), by weekday booked on, the staleness of its days' bookings, sorted. */
  byOpenBand?: Record<string, number[][]>;
}

export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

export async function runSchedule(
  world: World,
  schedule: Schedule,
  options: FreshnessOptions,
): Promise<ScheduleResult> {
  const bands = bandsWithin(bandsOf(schedule.bands), HORIZON_DAYS);
  const redis = createRedisConnection(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'command');
  const key = `bench-freshness:${schedule.name}:${Date.now()}`;
  const budget = createRedisCallBudget(redis, key, options.budgetPerSecond);
  const states: BandState[] = world.accounts.map(() => ({}));
  const accountReadAt: (number | null)[] = world.accounts.map(() => null);
  const pending: Booking[][] = world.accounts.map(() => []);
  const heap = new DueHeap();
  world.accounts.forEach((_, i) => heap.push(START, i));
  const measureFrom = START + options.warmupHours * HOUR_MS;
  const endMs = measureFrom + options.measureHours * HOUR_MS;
  const staleness = Object.fromEntries(DATE_BANDS.map((b) => [b.name, [] as number[]])) as Record<
    DateBand,
    number[]
  >;
  let unseen = 0;
  let measuredCalls = 0;
  let measuredSyncs = 0;
  const firstTwoOpenDays: number[][] = WEEKDAYS.map(() => []);
  const rankBands = options.openRankBands === undefined ? [] : bandsOf(options.openRankBands);
  const byOpenBand = Object.fromEntries(
    rankBands.map((band) => [band.name, WEEKDAYS.map(() => [] as number[])]),
  );
  const counting = schedule.counting ?? 'bookable';
  /** Per account: the open dates and the bands' dates, by today and whether today is still open. */
  const cuts = world.accounts.map(
    () => new Map<string, { open: Set<string>; byBand: Map<string, string[]> }>(),
  );
  const pullsByBand: Record<string, number> = Object.fromEntries(bands.map((band) => [band.name, 0]));
  let nextBooking = 0;
  const minuteCalls = new Map<number, number>();
  const horizons = new Map<string, Horizon>();
  const costCache = world.accounts.map(() => new Map<string, number>());
  let random = 0;
  const jitter = () => (random = (random * 9301 + 49297) % 233280) / 233280;

  try {
    for (let now = START; now < endMs; now += TICK_SECONDS * 1000) {
      for (; nextBooking < world.bookings.length && world.bookings[nextBooking]!.atMs <= now; nextBooking++) {
        const booking = world.bookings[nextBooking]!;
        pending[booking.userIndex]!.push(booking);
      }
      const nowDate = new Date(now);
      const due = heap.popDue(now, 5000);
      const byIndex = new Map(due.map((d) => [String(d.index), d]));
      const available = await budget.available(nowDate);
      const allocation = allocateCalls(
        bands,
        HORIZON_DAYS,
        due.map((d) => ({
          id: String(d.index),
          bandState: states[d.index]!,
          dueSince: new Date(d.at),
          accountCalls: accountReadDue(accountReadAt[d.index]!, now, schedule.accountIntervalSeconds)
            ? ACCOUNT_CALLS
            : 0,
        })),
        available,
        budget.capacity,
        nowDate,
      );
      let planned = 0;
      for (const pick of allocation.picks) {
        const index = Number(pick.connectionId);
        byIndex.delete(pick.connectionId);
        planned += pick.calls;
        const account = world.accounts[index]!;
        const today = DateTime.fromMillis(now, { zone: account.zone }).toISODate()!;
        const horizonKey = `${account.zone}|${today}`;
        let horizon = horizons.get(horizonKey);
        if (!horizon) horizons.set(horizonKey, (horizon = horizonFrom(nowDate, account.zone, HORIZON_DAYS)));
        // A first sync reads everything, the account and every band through its overviews.
        const whole = Object.keys(states[index]!).length === 0;
        const local = DateTime.fromMillis(now, { zone: account.zone });
        const todayOpen = account.lastEndMinute[local.weekday - 1]! > local.hour * 60 + local.minute;
        const cutKey = `${today}|${todayOpen}|${whole}`;
        let cut = cuts[index]!.get(cutKey);
        if (!cut) {
          const open = openDatesAt(account, horizon, now);
          // A first sync knows no open date yet: it cuts by calendar, as the worker does.
          const byBand = datesByBand(horizon, bands, counting === 'bookable' && !whole ? open : undefined);
          cuts[index]!.set(cutKey, (cut = { open, byBand }));
        }
        let readAccount =
          whole || accountReadDue(accountReadAt[index]!, now, schedule.accountIntervalSeconds);
        let calls = readAccount ? ACCOUNT_CALLS : 0;
        const pulled = new Map<string, string>();
        const results = pick.bands.map((name) => {
          const band = bands.find((b) => b.name === name)!;
          const dates = cut.byBand.get(band.name) ?? [];
          for (const date of dates) pulled.set(date, name);
          const cacheKey = `${cutKey}|${name}`;
          let cost = costCache[index]!.get(cacheKey);
          if (cost === undefined) {
            const span = spanOf(horizon, dates);
            const windows =
              span.length === 0
                ? 0
                : windowsCovering({ firstDate: span[0]!, lastDate: span.at(-1)!, dates: span }).length;
            cost = dates.length === 0 ? 0 : bandCalls(account, dates, today, windows, whole, cut.open);
            costCache[index]!.set(cacheKey, cost);
          }
          calls += cost;
          return { name, calls: cost, changes: 0 as number | null };
        });
        // What the pull saw: every booking on a date it pulled; a slot that started unseen is lost to it.
        const still: Booking[] = [];
        for (const booking of pending[index]!) {
          const band = pulled.get(booking.date);
          if (band !== undefined) {
            if (booking.atMs >= measureFrom) {
              staleness[booking.band].push((now - booking.atMs) / 1000);
              if (booking.openRank >= 0 && booking.openRank < 2) {
                firstTwoOpenDays[booking.bookedWeekday]!.push((now - booking.atMs) / 1000);
              }
              const rankBand = rankBands.find(
                (b) => booking.openRank >= b.fromDay && booking.openRank < b.toDay,
              );
              if (rankBand)
                byOpenBand[rankBand.name]![booking.bookedWeekday]!.push((now - booking.atMs) / 1000);
            }
            const result = results.find((r) => r.name === band)!;
            result.changes = (result.changes ?? 0) + 1;
          } else if (booking.startMs <= now) {
            if (booking.atMs >= measureFrom) unseen++;
          } else {
            still.push(booking);
          }
        }
        pending[index] = still;
        // A booking seen is a stored slot gone from its date's list: the account is read to tell why.
        if (!readAccount && results.some((r) => (r.changes ?? 0) > 0)) {
          readAccount = true;
          calls += ACCOUNT_CALLS;
        }
        if (readAccount) accountReadAt[index] = now;
        const firstPull = whole;
        const next = scheduleAfterPull(
          bands,
          readBandState(states[index]),
          firstPull ? results.map((r) => ({ ...r, changes: null })) : results,
          nowDate,
          schedule.adapt,
          0.1,
          jitter,
        );
        states[index] = next.state;
        heap.push(next.nextSyncAt.getTime(), index);
        if (now >= measureFrom) {
          measuredCalls += calls;
          measuredSyncs += 1;
          for (const name of pick.bands) pullsByBand[name] = (pullsByBand[name] ?? 0) + 1;
          const minute = Math.floor(now / 60_000);
          minuteCalls.set(minute, (minuteCalls.get(minute) ?? 0) + calls);
        }
      }
      if (planned > 0) await budget.spend(planned, nowDate);
      for (const left of byIndex.values()) heap.push(left.at, left.index);
    }
  } finally {
    await redis.del(key);
    redis.disconnect();
  }
  for (const values of Object.values(staleness)) values.sort((a, b) => a - b);
  for (const values of firstTwoOpenDays) values.sort((a, b) => a - b);
  for (const values of Object.values(byOpenBand).flat()) values.sort((a, b) => a - b);
  return {
    firstTwoOpenDays,
    ...(rankBands.length > 0 ? { byOpenBand } : {}),
    callsPerConnectionHour: measuredCalls / (world.accounts.length * options.measureHours),
    syncsPerConnectionHour: measuredSyncs / (world.accounts.length * options.measureHours),
    staleness,
    unseen,
    peakMinuteShare: Math.max(0, ...minuteCalls.values()) / (options.budgetPerSecond * 60),
    pullsByBand,
  };
}

const minutes = (seconds: number | null) => (seconds === null ? null : Math.round((seconds / 60) * 10) / 10);

export function figuresOf(result: ScheduleResult) {
  const figures: Record<string, number | null> = {
    'calls per connection-hour': Math.round(result.callsPerConnectionHour * 10) / 10,
  };
  for (const band of DATE_BANDS) {
    const values = result.staleness[band.name];
    figures[`${band.name} p50 min`] = minutes(percentile(values, 0.5));
    figures[`${band.name} p95 min`] = minutes(percentile(values, 0.95));
    figures[`${band.name} changes`] = values.length;
  }
  figures['changes unseen before their slot started'] = result.unseen;
  figures['busiest minute, share of the budget'] = Math.round(result.peakMinuteShare * 100) / 100;
  return figures;
}

/** p95 of changes whose slot was within 72 h when booked (bands 0-24h and 1-3d together). */
export function p95Within72h(result: ScheduleResult): number {
  const values = [...result.staleness['0-24h'], ...result.staleness['1-3d']].sort((a, b) => a - b);
  return percentile(values, 0.95) ?? Infinity;
}

/** SYNC_BANDS and SYNC_ADAPT_FACTORS as one configuration the frontier names. */
export function scheduleOf(bands: string, adapt: AdaptBounds, accountIntervalSeconds: number): Schedule {
  return {
    name: `${bands} (${adaptText(adapt)}; account ${accountText(accountIntervalSeconds)})`,
    bands,
    adapt,
    accountIntervalSeconds,
  };
}

export const accountText = (seconds: number) => (seconds % 60 === 0 ? `${seconds / 60}m` : `${seconds}s`);

export function adaptText(adapt: AdaptBounds): string {
  return `${adapt.fastest},${adapt.slowest}`;
}

/**
 * The targets for the default configuration, against the fixed schedule measured in the same run:
 * 0–24 h p95 ≤ 5 minutes, no more calls than fixed, 1–3 d p95 no worse than the 14.4 minutes of the bands
 * before (issue 30).
 */
export const FRESHNESS_TARGETS = { nearP95Minutes: 5, callsVsFixed: 1, oneToThreeDaysP95Minutes: 14.4 };

export function freshnessTargets(result: ScheduleResult, fixed: ScheduleResult) {
  const p95 = (band: DateBand) => minutes(percentile(result.staleness[band], 0.95)) ?? Infinity;
  const ratio = result.callsPerConnectionHour / fixed.callsPerConnectionHour;
  return {
    '0-24h p95': {
      target: `≤ ${FRESHNESS_TARGETS.nearP95Minutes} min`,
      met: p95('0-24h') <= FRESHNESS_TARGETS.nearP95Minutes,
    },
    'calls vs fixed': {
      target: `≤ ${FRESHNESS_TARGETS.callsVsFixed}`,
      met: ratio <= FRESHNESS_TARGETS.callsVsFixed,
    },
    '1-3d p95': {
      target: `≤ ${FRESHNESS_TARGETS.oneToThreeDaysP95Minutes} min`,
      met: p95('1-3d') <= FRESHNESS_TARGETS.oneToThreeDaysP95Minutes,
    },
  };
}

/**
 * Each configuration of the frontier under `budgetPerSecond` (ample for the fixed schedule, the first of
 * them), then the fixed one and `chosen` again under `shortBudgetPerSecond`, where neither gets all it asks
 * for: the fixed one goes stale everywhere, the banded one in its far bands first, none stopping.
 */
export async function benchFreshness(
  options: FreshnessOptions & { shortBudgetPerSecond: number },
  frontier: readonly Schedule[],
  chosen: Schedule,
): Promise<BenchSection[]> {
  const started = performance.now();
  const world = await makeWorld(options);
  check(world.bookings.length > 0, 'the simulator recorded no bookings');
  const madeIn = Math.round((performance.now() - started) / 1000);
  const inputsAt = (budgetPerSecond: number, schedule: Schedule) => ({
    [FRONTIER_INPUTS.bands]: schedule.bands,
    [FRONTIER_INPUTS.adapt]: adaptText(schedule.adapt),
    [FRONTIER_INPUTS.account]: accountText(schedule.accountIntervalSeconds),
    connections: options.connections,
    'event types each': EVENT_TYPES,
    'horizon days': HORIZON_DAYS,
    'budget calls/s': budgetPerSecond,
    'simulated hours (after warm-up)': options.measureHours,
    'warm-up hours': options.warmupHours,
    'bookings per connection-day (mean)': options.bookingsPerDay,
    'bookings made': world.bookings.length,
    'world built in s': madeIn,
  });
  const ratioTo = (result: ScheduleResult, fixed: ScheduleResult) =>
    Math.round((result.callsPerConnectionHour / fixed.callsPerConnectionHour) * 100) / 100;
  const sections: BenchSection[] = [];

  const schedules = [FIXED, ...frontier.filter((s) => s.name !== FIXED.name)];
  const ample = { ...options, budgetPerSecond: options.budgetPerSecond };
  const fixed = await runSchedule(world, FIXED, ample);
  for (const schedule of schedules) {
    const result = schedule === FIXED ? fixed : await runSchedule(world, schedule, ample);
    console.log(`freshness: ${schedule.name} done (${Math.round((performance.now() - started) / 1000)} s)`);
    const isChosen = schedule.name === chosen.name;
    sections.push({
      benchmark: `freshness at ${options.budgetPerSecond} calls/s: ${schedule.name}${isChosen ? ', the default' : ''}`,
      inputs: { ...inputsAt(options.budgetPerSecond, schedule), [FRONTIER_INPUTS.run]: 'counted' },
      figures: { ...figuresOf(result), 'calls vs fixed': ratioTo(result, fixed) },
      ...(isChosen ? { targets: freshnessTargets(result, fixed) } : {}),
    });
  }

  const short = { ...options, budgetPerSecond: options.shortBudgetPerSecond };
  const fixedShort = await runSchedule(world, FIXED, short);
  const chosenShort = await runSchedule(world, chosen, short);
  for (const [schedule, result] of [
    [FIXED, fixedShort],
    [chosen, chosenShort],
  ] as const) {
    const stopped = Object.entries(result.pullsByBand).filter(([, pulls]) => pulls === 0);
    const p95 = (band: DateBand) => percentile(result.staleness[band], 0.95) ?? Infinity;
    sections.push({
      benchmark: `freshness at ${options.shortBudgetPerSecond} calls/s (short): ${schedule.name}`,
      inputs: inputsAt(options.shortBudgetPerSecond, schedule),
      figures: {
        ...figuresOf(result),
        'calls vs fixed': ratioTo(result, fixedShort),
        ...Object.fromEntries(Object.entries(result.pullsByBand).map(([band, n]) => [`pulls of ${band}`, n])),
      },
      ...(schedule.name === chosen.name
        ? {
            targets: {
              'every band pulled (none stops)': {
                target: 'each band pulled in the measured hours',
                met: stopped.length === 0,
              },
              'far bands give way first': {
                target: '0-24h p95 ≤ 7d+ p95, and ≤ fixed',
                met:
                  p95('0-24h') <= p95('7d+') &&
                  p95('0-24h') <= (percentile(fixedShort.staleness['0-24h'], 0.95) ?? Infinity),
              },
            },
          }
        : {}),
    });
  }
  return sections;
}
