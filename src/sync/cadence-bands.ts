// What sync/ does with the cadence bands (declared and parsed with the settings, config/sync-bands.ts): the
// dates of each band in one horizon, and a band's nearest-first rank.
//
// Bands count bookable days (issue 38): `2d=4m` is the first two dates that hold an open slot, whatever the
// calendar says between them. On a Saturday, for an account open Monday to Friday, that is Monday and Tuesday:
// the days people book next. A date with nothing open stays in the band of its calendar distance (today's and
// tomorrow's in the first band, as before), so it is never pulled more often than when bands counted calendar
// days, and a cancellation or new hours there are still seen at that band's interval. A date's rank among the
// open ones is never more than its calendar distance, so an open date is never pulled less often either.
// Without knowing which dates are open (a first sync, nothing open stored) every date counts, as before.
import type { CadenceBand } from '../config/sync-bands.js';
import type { Horizon } from './horizon-windows.js';

function bandOfDay(bands: readonly CadenceBand[], day: number): CadenceBand | undefined {
  return bands.find((band) => day >= band.fromDay && day < band.toDay);
}

/**
 * The horizon's dates of each band (every band named, in the horizon's order; a band may get none): a date in
 * `open` by its rank among the open dates, any other by its calendar distance from the horizon's first date.
 * `open` undefined, or holding none of the horizon's dates: every date by its calendar distance.
 */
export function datesByBand(
  horizon: Horizon,
  bands: readonly CadenceBand[],
  open?: ReadonlySet<string>,
): Map<string, string[]> {
  const byBand = new Map(bands.map((band) => [band.name, [] as string[]]));
  const counting = open !== undefined && horizon.dates.some((date) => open.has(date));
  let rank = 0;
  horizon.dates.forEach((date, day) => {
    const bookable = !counting || open.has(date);
    const band = bandOfDay(bands, bookable && counting ? rank : day);
    if (bookable) rank += 1;
    byBand.get(band?.name ?? '')?.push(date);
  });
  return byBand;
}

/** The horizon's dates that fall in `band` by calendar distance alone (what datesByBand does knowing no open date). */
export function datesOfBand(horizon: Horizon, band: CadenceBand): string[] {
  return horizon.dates.slice(band.fromDay, Math.min(band.toDay, horizon.dates.length));
}

/** The nearest-first rank of a band by name; unknown names (a band since removed from the config) rank last. */
export function bandRank(bands: readonly CadenceBand[], name: string): number {
  const index = bands.findIndex((band) => band.name === name);
  return index === -1 ? bands.length : index;
}

/** The horizon's dates from the first of `dates` to the last, gaps included: what one overview window spans. */
export function spanOf(horizon: Horizon, dates: readonly string[]): string[] {
  if (dates.length === 0) return [];
  const first = horizon.dates.indexOf(dates[0]!);
  const last = horizon.dates.indexOf(dates.at(-1)!);
  return first === -1 || last === -1 ? [...dates] : horizon.dates.slice(first, last + 1);
}
