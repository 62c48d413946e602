// Benchmark (issue 38): the near band where people book, on every day of the week. The counted freshness run
// (freshness.ts: the simulator's accounts and booking log, the scheduler's budget and band schedule, the
// worker's cut of bands into dates, calls counted by the API's rule) over a whole simulated week, with
// realistic weekly hours (most accounts Monday to Friday, some six days, some night shifts across midnight) and
// guests booking the earliest days they can. Measured: the staleness of bookings on the first two days people
// could book when they booked, by the weekday they booked on, for the default bands counted in bookable days
// (the worker's) and in calendar days (the bands before), against the fixed 15-minute schedule's calls; and the
// same for the days of every band (issue 41: the third and fourth bookable days, the fifth to seventh, the rest).
import { DATE_BANDS } from '../../src/lib/date-bands.js';
import { check, type BenchSection } from './bench-result.js';
import {
  bandsOf,
  FIXED,
  figuresOf,
  makeWorld,
  percentile,
  runSchedule,
  type FreshnessOptions,
  type Schedule,
  type ScheduleResult,
} from './freshness.js';

export interface WeekOptions {
  connections: number;
  budgetPerSecond: number;
  bookingsPerDay: number;
}

const WEEKDAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
/** The targets: p95 ≤ 5 minutes on every weekday, at no more calls than the fixed schedule. */
export const WEEK_TARGETS = { firstTwoDaysP95Minutes: 5, callsVsFixed: 1 };

const minutes = (seconds: number | null) => (seconds === null ? null : Math.round((seconds / 60) * 10) / 10);

function byWeekday(result: ScheduleResult) {
  return (result.firstTwoOpenDays ?? []).map((values) => ({
    p50: minutes(percentile(values, 0.5)),
    p95: minutes(percentile(values, 0.95)),
    n: values.length,
  }));
}

/** One band's days (by their rank among the open dates when booked): p50 and p95 minutes by weekday. */
function byWeekdayIn(result: ScheduleResult, band: string) {
  return (result.byOpenBand?.[band] ?? []).map((values) => ({
    p50: minutes(percentile(values, 0.5)),
    p95: minutes(percentile(values, 0.95)),
    n: values.length,
  }));
}

/**
 * Every band's days by weekday (issue 41, finding 14): one row per weekday and band, the bookings on the days of
 * that band's bookable-day ranks when made, p50 / p95 minutes for each way of pulling them.
 */
export function weekBandTable(
  bands: readonly string[],
  calendar: ScheduleResult,
  bookable: ScheduleResult,
  fixed: ScheduleResult,
): string {
  const cell = (day: { p50: number | null; p95: number | null } | undefined) => `${day?.p50} / ${day?.p95}`;
  const rows = bands.flatMap((band) => {
    const [c, b, f] = [byWeekdayIn(calendar, band), byWeekdayIn(bookable, band), byWeekdayIn(fixed, band)];
    return WEEKDAY_NAMES.map(
      (name, i) => `| ${band} | ${name} | ${b[i]?.n} | ${cell(c[i])} | ${cell(b[i])} | ${cell(f[i])} |`,
    );
  });
  return [
    '| bookable days | booked on | bookings | calendar-day bands p50 / p95 | bookable-day bands p50 / p95 | fixed 15 min p50 / p95 |',
    '|---|---|---:|---|---|---|',
    ...rows,
  ].join('\n');
}

/** The per-weekday table docs/performance.md quotes: calendar-day bands beside bookable-day bands. */
export function weekTable(calendar: ScheduleResult, bookable: ScheduleResult, fixed: ScheduleResult): string {
  const [c, b, f] = [byWeekday(calendar), byWeekday(bookable), byWeekday(fixed)];
  const rows = WEEKDAY_NAMES.map(
    (name, i) =>
      `| ${name} | ${c[i]!.n} | ${c[i]!.p50} | ${c[i]!.p95} | ${b[i]!.p50} | ${b[i]!.p95} | ${f[i]!.p95} |`,
  );
  return [
    '| booked on | bookings | calendar days p50 | calendar days p95 | bookable days p50 | bookable days p95 | fixed 15 min p95 |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

export async function benchFreshnessWeek(options: WeekOptions, chosen: Schedule): Promise<BenchSection[]> {
  const started = performance.now();
  const run: FreshnessOptions = {
    connections: options.connections,
    budgetPerSecond: options.budgetPerSecond,
    // The world starts on a Monday 00:00 UTC: a day's warm-up, then a whole week.
    warmupHours: 24,
    measureHours: 7 * 24,
    bookingsPerDay: options.bookingsPerDay,
    hours: 'realistic',
    openRankBands: chosen.bands,
  };
  const world = await makeWorld(run);
  check(world.bookings.length > 0, 'the simulator recorded no bookings');
  const madeIn = Math.round((performance.now() - started) / 1000);
  const calendar: Schedule = { ...chosen, name: `${chosen.name} [calendar days]`, counting: 'calendar' };
  const bookable: Schedule = { ...chosen, name: `${chosen.name} [bookable days]`, counting: 'bookable' };
  const bandNames = bandsOf(chosen.bands).map((band) => band.name);
  const results = new Map<Schedule, ScheduleResult>();
  for (const schedule of [FIXED, calendar, bookable]) {
    results.set(schedule, await runSchedule(world, schedule, run));
    console.log(
      `freshness-week: ${schedule.name} done (${Math.round((performance.now() - started) / 1000)} s)`,
    );
  }
  const fixed = results.get(FIXED)!;
  console.log(
    `\nfreshness over a week: bookings on the first two bookable days, staleness in minutes\n` +
      weekTable(results.get(calendar)!, results.get(bookable)!, fixed) +
      `\n\nevery band, by the bookable days of ${chosen.bands} the booking's date was on when made, staleness in minutes\n` +
      weekBandTable(bandNames, results.get(calendar)!, results.get(bookable)!, fixed),
  );
  return [FIXED, calendar, bookable].map((schedule) => {
    const result = results.get(schedule)!;
    const ratio = Math.round((result.callsPerConnectionHour / fixed.callsPerConnectionHour) * 100) / 100;
    const days = byWeekday(result);
    const figures: Record<string, number | null> = { ...figuresOf(result), 'calls vs fixed': ratio };
    days.forEach((day, i) => {
      figures[`first 2 bookable days, booked ${WEEKDAY_NAMES[i]}: p50 min`] = day.p50;
      figures[`first 2 bookable days, booked ${WEEKDAY_NAMES[i]}: p95 min`] = day.p95;
      figures[`first 2 bookable days, booked ${WEEKDAY_NAMES[i]}: changes`] = day.n;
    });
    for (const band of bandNames) {
      byWeekdayIn(result, band).forEach((day, i) => {
        figures[`${band} (bookable), booked ${WEEKDAY_NAMES[i]}: p95 min`] = day.p95;
        figures[`${band} (bookable), booked ${WEEKDAY_NAMES[i]}: changes`] = day.n;
      });
    }
    const worst = Math.max(...days.map((day) => day.p95 ?? Infinity));
    return {
      benchmark: `freshness over a week, realistic hours: ${schedule.name}`,
      inputs: {
        connections: options.connections,
        'budget calls/s': options.budgetPerSecond,
        'bookings per connection-day (mean)': options.bookingsPerDay,
        hours: '7 in 10 Mon-Fri, 2 in 10 six days, 1 in 10 night shifts across midnight',
        'lead counted in': 'days with an open slot',
        'simulated hours (after a day of warm-up)': run.measureHours,
        'bookings made': world.bookings.length,
        'world built in s': madeIn,
        'report bands': DATE_BANDS.map((band) => band.name).join(', '),
      },
      figures,
      ...(schedule === bookable
        ? {
            targets: {
              'first 2 bookable days p95, every weekday': {
                target: `≤ ${WEEK_TARGETS.firstTwoDaysP95Minutes} min`,
                met: worst <= WEEK_TARGETS.firstTwoDaysP95Minutes,
              },
              'calls vs fixed': {
                target: `≤ ${WEEK_TARGETS.callsVsFixed}`,
                met: ratio <= WEEK_TARGETS.callsVsFixed,
              },
            },
          }
        : {}),
    };
  });
}
