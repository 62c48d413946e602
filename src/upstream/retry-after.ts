// Retry-After (RFC 9110 §10.2.3) is either delta-seconds or an HTTP-date. RFC 9110 §5.6.7 obliges a
// recipient to accept all three HTTP-date spellings (IMF-fixdate, obsolete RFC 850, asctime), so they are
// parsed here by hand: Date.parse would read an asctime date (which carries no zone) as local time and
// silently roll "Feb 30" over into March.

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const HTTP_DATE_FORMS = [
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  /^[A-Z][a-z]{2}, (?<day>\d{2}) (?<month>[A-Z][a-z]{2}) (?<year>\d{4}) (?<hour>\d{2}):(?<minute>\d{2}):(?<second>\d{2}) GMT$/,
  // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
  /^[A-Z][a-z]+, (?<day>\d{2})-(?<month>[A-Z][a-z]{2})-(?<year>\d{2}) (?<hour>\d{2}):(?<minute>\d{2}):(?<second>\d{2}) GMT$/,
  // asctime: Sun Nov  6 08:49:37 1994
  /^[A-Z][a-z]{2} (?<month>[A-Z][a-z]{2}) (?<day>[ \d]\d) (?<hour>\d{2}):(?<minute>\d{2}):(?<second>\d{2}) (?<year>\d{4})$/,
];

function fullYear(written: string, now: Date): number {
  if (written.length === 4) return Number(written);
  // RFC 9110: a two-digit year that would lie more than 50 years in the future is in the past century.
  const thisYear = now.getUTCFullYear();
  const year = Math.floor(thisYear / 100) * 100 + Number(written);
  return year > thisYear + 50 ? year - 100 : year;
}

function parseHttpDate(value: string, now: Date): number | undefined {
  for (const form of HTTP_DATE_FORMS) {
    const g = form.exec(value)?.groups;
    if (!g) continue;
    const month = MONTHS.indexOf(g['month'] ?? '');
    const day = Number(g['day']);
    const hour = Number(g['hour']);
    const minute = Number(g['minute']);
    // A leap second (60) is legal in the grammar; JavaScript time has none, so it counts as :59.
    const second = Math.min(Number(g['second']), 59);
    if (month < 0 || hour > 23 || minute > 59 || Number(g['second']) > 60) return undefined;
    const ms = Date.UTC(fullYear(g['year'] ?? '', now), month, day, hour, minute, second);
    // Date.UTC rolls impossible days over (Feb 30 → Mar 2); a date that does not round-trip is garbage.
    return new Date(ms).getUTCDate() === day ? ms : undefined;
  }
  return undefined;
}

/**
 * Milliseconds to wait before retrying, or undefined when the header is absent or unreadable. An
 * HTTP-date is taken relative to `now` (the caller's clock); a date already past means "retry now" (0).
 * No upper bound is applied here: capping the wait is the job layer's policy.
 */
export function parseRetryAfter(value: string | null, now: Date): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    const ms = Number(trimmed) * 1000;
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  const at = parseHttpDate(trimmed, now);
  return at === undefined ? undefined : Math.max(0, at - now.getTime());
}
