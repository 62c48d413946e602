// HTTP-dates (RFC 9110 §5.6.7), parsed and written in one place: conditional GETs read If-Modified-Since, the
// upstream client reads Retry-After. A recipient must accept all three spellings (IMF-fixdate, obsolete RFC 850,
// asctime), so they are parsed here by hand: Date.parse would read an asctime date (which carries no zone) as
// local time and silently roll "Feb 30" over into March.

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const IMF_FIXDATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const RFC850_DATE =
  /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const ASCTIME_DATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

function utcDate(
  year: number,
  monthName: string,
  day: number,
  hour: number,
  minute: number,
  second: number,
): Date | undefined {
  const month = MONTHS.indexOf(monthName);
  if (month < 0 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  const date = new Date(ms);
  // Date.UTC rolls 31 Feb over into March; a date that does not exist is not an HTTP-date.
  return date.getUTCDate() === day && date.getUTCMonth() === month ? date : undefined;
}

/**
 * An HTTP-date (RFC 9110 §5.6.7) in any of its three forms, or undefined. Stricter than Date.parse on
 * purpose: a value that is not an HTTP-date must be ignored, not read as something else.
 */
export function parseHttpDate(value: string, now: Date = new Date()): Date | undefined {
  const text = value.trim();
  let m = IMF_FIXDATE.exec(text);
  if (m) return utcDate(Number(m[3]), m[2] ?? '', Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  m = RFC850_DATE.exec(text);
  if (m) {
    // Two-digit years: RFC 9110 reads a year more than 50 years ahead as the past century's.
    const yy = Number(m[3]);
    const nowYear = now.getUTCFullYear();
    let year = Math.floor(nowYear / 100) * 100 + yy;
    if (year > nowYear + 50) year -= 100;
    return utcDate(year, m[2] ?? '', Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  m = ASCTIME_DATE.exec(text);
  if (m) {
    return utcDate(
      Number(m[6]),
      m[1] ?? '',
      Number((m[2] ?? '').trim()),
      Number(m[3]),
      Number(m[4]),
      Number(m[5]),
    );
  }
  return undefined;
}

export function wholeSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** Last-Modified as sent: IMF-fixdate, truncated to the second like every HTTP date. */
export function formatHttpDate(date: Date): string {
  return new Date(wholeSeconds(date) * 1000).toUTCString();
}
