// Times relative to now ("3 minutes ago"), beside a time in its named zone (lib/local-time.ts): pages never
// show a bare UTC ISO string.
//
// Each span is rounded to its nearest unit, the unit chosen after rounding: a link that expires in 7 days, made a
// minute ago, reads "in 7 days" (cut down it read "in 6 days", and a minute earlier "next week"). Numbers always
// ("in 1 day", not "tomorrow"): 23 hours ahead is not always tomorrow's date.
const DAY_SECONDS = 24 * 3600;

/** Each unit, its length in seconds, and the first rounded count that is said in the next unit up. */
const UNITS: [Intl.RelativeTimeFormatUnit, number, number][] = [
  ['minute', 60, 60],
  ['hour', 3600, 24],
  ['day', DAY_SECONDS, 14],
  ['week', 7 * DAY_SECONDS, 9],
  ['month', 30 * DAY_SECONDS, 12],
  ['year', 365 * DAY_SECONDS, Infinity],
];

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'always' });

/** "3 minutes ago", "in 2 hours", "in 7 days", "just now" (under half a minute either way). */
export function relativeTime(date: Date, now: Date): string {
  const seconds = (date.getTime() - now.getTime()) / 1000;
  if (!Number.isFinite(seconds) || Math.abs(seconds) < 30) return 'just now';
  // Halves away from zero, so that a span ago reads as the same span ahead does (Math.round takes -0.5 to -0).
  const rounded = (x: number) => Math.sign(x) * Math.round(Math.abs(x));
  const said = UNITS.map(([unit, size, nextFrom]) => ({ unit, count: rounded(seconds / size), nextFrom }));
  const { unit, count } = said.find((one) => Math.abs(one.count) < one.nextFrom)!;
  return relative.format(count, unit);
}
