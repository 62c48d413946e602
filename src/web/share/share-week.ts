// What a share page shows, as plain data: one week of the feed's free blocks in the zone the viewer chose
// (the owner's when none), its days within what the feed shows, and the "copy these times" text. Pure: luxon
// does the zone arithmetic, so a DST change inside the week and half-hour zones need nothing of our own.
import { DateTime, IANAZone } from 'luxon';
import { CURRENT_ZONE_NAMES } from '../../lib/iana-current-names.js';
import type { LocalWords } from './viewer-locale.js';
import type { FeedWindow } from '../../serving/feed-window.js';
import type { FreeTimeBlock } from '../../serving/feed-free-time.js';

const WEEK_DAYS = 7;

export interface ShareWeek extends FeedWindow {
  zone: string;
  /** 0: the week from today (in `zone`); 1 the week after, and so on. */
  index: number;
  /** Each day of the week that starts before the feed's shown days end, as 'YYYY-MM-DD'. */
  dates: string[];
  hasPrevious: boolean;
  hasNext: boolean;
}

/** A zone name a page may render in: a valid IANA name (its current one), else undefined. */
export function validZone(zone: string | undefined): string | undefined {
  if (zone === undefined || zone === '' || zone.length > 64) return undefined;
  // IANAZone.create keeps one instance per name; isValidZone would build an Intl formatter on every call.
  const iana = IANAZone.create(zone);
  if (!iana.isValid) return undefined;
  const name = iana.name;
  return CURRENT_ZONE_NAMES.get(name) ?? name;
}

/**
 * The week numbered `index` from today in `zone`, cut to the days the feed shows (they end at `shownEnd`);
 * an index past the last week with a shown day is the last such week.
 */
export function shareWeek(now: Date, zone: string, index: number, shownEnd: Date): ShareWeek {
  const today = DateTime.fromJSDate(now, { zone }).startOf('day');
  const weeksShown = Math.max(
    1,
    Math.ceil(DateTime.fromJSDate(shownEnd, { zone }).diff(today, 'days').days / WEEK_DAYS),
  );
  const shown = Math.min(Math.max(0, Math.floor(index)), weeksShown - 1);
  const start = today.plus({ days: shown * WEEK_DAYS });
  const end = start.plus({ days: WEEK_DAYS });
  const dates: string[] = [];
  for (let day = start; day < end && day.toMillis() < shownEnd.getTime(); day = day.plus({ days: 1 })) {
    dates.push(day.toISODate()!);
  }
  return {
    zone,
    index: shown,
    dates,
    windowStart: start.toJSDate(),
    windowEnd: end.toJSDate(),
    windowKey: `${start.toISODate()}/${zone}`,
    hasPrevious: shown > 0,
    hasNext: shown < weeksShown - 1,
  };
}

export interface ShownBlock extends FreeTimeBlock {
  /** Its start, in the zone and the viewer's words ('09:00', '9:00 AM'). */
  from: string;
  /** Its end likewise, with the day when it ends on a later one ('Sat 02:00'). */
  to: string;
}

export interface ShownDay {
  date: string;
  /** 'Mon 1 Dec', 'Mon, Dec 1'. */
  label: string;
  blocks: ShownBlock[];
}

/** The week's days, each with the blocks that start on it (in the week's zone), in the viewer's words. */
export function shownDays(week: ShareWeek, blocks: readonly FreeTimeBlock[], words: LocalWords): ShownDay[] {
  const byDate = new Map<string, ShownBlock[]>(week.dates.map((date) => [date, []]));
  for (const block of blocks) {
    const start = DateTime.fromJSDate(block.startsAt, { zone: week.zone });
    const end = DateTime.fromJSDate(block.endsAt, { zone: week.zone });
    const day = byDate.get(start.toISODate()!);
    if (day === undefined) continue;
    const nextMidnight = start.startOf('day').plus({ days: 1 }).toMillis();
    day.push({
      ...block,
      from: words.time(start),
      // A block ending at midnight ends "24:00" of its day rather than "00:00" of the next.
      to:
        end.toMillis() === nextMidnight
          ? words.endOfDay(end)
          : end.toISODate() === start.toISODate()
            ? words.time(end)
            : words.dayAndTime(end),
    });
  }
  return week.dates.map((date) => ({
    date,
    label: words.day(DateTime.fromISO(date, { zone: week.zone })),
    blocks: byDate.get(date) ?? [],
  }));
}

/**
 * "Copy these times": one line a day that has free time, `Mon 1 Dec: 09:00–12:00, 13:00–17:00 (Europe/Berlin)`;
 * a single line saying so when the week has none.
 */
export function copyText(days: readonly ShownDay[], zone: string): string {
  const lines = days
    .filter((day) => day.blocks.length > 0)
    .map((day) => `${day.label}: ${day.blocks.map((b) => `${b.from}–${b.to}`).join(', ')} (${zone})`);
  if (lines.length > 0) return `${lines.join('\n')}\n`;
  const first = days[0];
  const last = days[days.length - 1];
  return first && last
    ? `No free time ${first.label}–${last.label} (${zone})\n`
    : `No free time in these days (${zone})\n`;
}
