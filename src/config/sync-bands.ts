// The values of SYNC_BANDS and SYNC_ADAPT_FACTORS: cadence by date band. The horizon's dates are cut into bands
// by how many bookable days ahead they are (in the account's zone: dates with an open slot, counted from today;
// sync/cadence-bands.ts cuts them, a date with nothing open by its calendar distance), and each band is pulled
// on its own interval. The first days people can book are pulled often; far ones, which rarely change, seldom.
// SYNC_BANDS declares them once, e.g. `4d=10m,7d=40m,*=3h`: the first four bookable days every 10 minutes, the
// next three every 40, the rest of the horizon every 3 hours. A single `*=15m` is the fixed schedule: the whole
// horizon every time. Kept with the settings (not in sync/) because config parses and clips them at start-up.
//
// Bands are measured in dates, not hours: a pull asks for whole dates (overview windows and slot lists are
// per date), so a band is exactly the set of dates one partial pull fetches, whatever DST does to the day.
import { z } from 'zod';

export interface CadenceBand {
  /** How the band appears in metrics, job data and stored state: "days 0-3", "days 4-6", "days 7+" (bandName). */
  name: string;
  /** First bookable day in the band (0 = the first date with an open slot), inclusive. */
  fromDay: number;
  /** Bookable day the band stops before; Infinity for the last band (the rest of the horizon). */
  toDay: number;
  intervalSeconds: number;
}

/** How far a connection's own activity may move its band intervals (SYNC_ADAPT_FACTORS). */
export interface AdaptBounds {
  /** Smallest factor of a band's interval (a connection whose slots change often). */
  fastest: number;
  /** Largest factor (a connection whose slots rarely change). */
  slowest: number;
}

const DURATION = /^(\d+)(s|m|h)$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;

function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
}

/**
 * A band's label: the bookable days it covers (0 is the first), last one included: "days 0-3", "day 4", "days 7+".
 * (The names were given when bands counted calendar days; kept, so stored band state and dashboards carry over.) Words
 * and dates, so no label is ever one of the report bands', which count hours ahead ("0-24h" … "7d+",
 * lib/date-bands.ts) and share the dashboards (test/config/band-labels.test.ts).
 */
export function bandName(fromDay: number, toDay: number): string {
  if (toDay === Infinity) return `days ${fromDay}+`;
  return toDay - fromDay === 1 ? `day ${fromDay}` : `days ${fromDay}-${toDay - 1}`;
}

const INTERVAL_RULE = 'must be 60s to 24h, written like 90s, 10m or 2h';

/** An interval of 60 s to 24 h written like 90s, 10m or 2h, in seconds (SYNC_ACCOUNT_INTERVAL). */
export const intervalSchema = z.string().transform((text, context) => {
  const seconds = parseDuration(text.trim());
  if (seconds === undefined || seconds < 60 || seconds > 86_400) {
    context.addIssue({ code: 'custom', message: INTERVAL_RULE });
    return z.NEVER;
  }
  return seconds;
});

/** Parses SYNC_BANDS; errors say which entry is wrong and what it should look like. */
export function parseCadenceBands(
  text: string,
): { ok: true; bands: CadenceBand[] } | { ok: false; error: string } {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) return { ok: false, error: 'needs at least one band, e.g. "*=15m"' };
  const bands: CadenceBand[] = [];
  let fromDay = 0;
  for (const [index, entry] of entries.entries()) {
    const [until, every, extra] = entry.split('=');
    if (until === undefined || every === undefined || extra !== undefined) {
      return { ok: false, error: `"${entry}" is not <bookable days>=<interval>, e.g. "3d=10m"` };
    }
    const last = index === entries.length - 1;
    const intervalSeconds = parseDuration(every);
    if (intervalSeconds === undefined || intervalSeconds < 60 || intervalSeconds > 86_400) {
      return { ok: false, error: `"${entry}": the interval ${INTERVAL_RULE}` };
    }
    if (until === '*') {
      if (!last)
        return { ok: false, error: `"${entry}": "*" (the rest of the horizon) must be the last band` };
      bands.push({ name: bandName(fromDay, Infinity), fromDay, toDay: Infinity, intervalSeconds });
      break;
    }
    const days = /^(\d+)d$/.exec(until);
    const toDay = days ? Number(days[1]) : NaN;
    if (!Number.isInteger(toDay) || toDay <= fromDay) {
      return { ok: false, error: `"${entry}": the bookable days must be like 3d and grow from band to band` };
    }
    if (last) return { ok: false, error: `"${entry}": the last band must be "*" (the rest of the horizon)` };
    bands.push({ name: bandName(fromDay, toDay), fromDay, toDay, intervalSeconds });
    fromDay = toDay;
  }
  return { ok: true, bands };
}

/** The zod schema config.ts uses for SYNC_BANDS. */
export const cadenceBandsSchema = z.string().transform((text, context) => {
  const parsed = parseCadenceBands(text);
  if (!parsed.ok) {
    context.addIssue({ code: 'custom', message: parsed.error });
    return z.NEVER;
  }
  return parsed.bands;
});

/** Bands with at least one date in a horizon of `horizonDays` (a band beyond the horizon is never pulled). */
export function bandsWithin(bands: readonly CadenceBand[], horizonDays: number): CadenceBand[] {
  return bands.filter((band) => band.fromDay < horizonDays);
}
