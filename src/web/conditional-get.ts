// Conditional GET for feeds (RFC 9110 §13): If-None-Match against the ETag, else If-Modified-Since against
// Last-Modified in whole seconds. Pure functions over header values, so every case is testable without HTTP.

export interface Validators {
  /** Opaque tags (without W/ or quotes) that identify the current representation; any match means unchanged. */
  opaqueTags: readonly string[];
  lastModified: Date;
}

export interface ConditionalHeaders {
  ifNoneMatch?: string | undefined;
  ifModifiedSince?: string | undefined;
}

const ENTITY_TAG = /^\s*(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)/;

/**
 * The opaque tags of an If-None-Match list, '*' as ['*'], or undefined when the value is malformed (then the
 * condition is treated as absent rather than guessed at).
 */
export function parseEntityTagList(value: string): string[] | undefined {
  if (value.trim() === '*') return ['*'];
  const tags: string[] = [];
  let rest = value;
  while (rest.trim() !== '') {
    // Empty list elements (", ,") are allowed by the list syntax (RFC 9110 §5.6.1).
    const empty = /^\s*,/.exec(rest);
    if (empty) {
      rest = rest.slice(empty[0].length);
      continue;
    }
    const match = ENTITY_TAG.exec(rest);
    if (!match) return undefined;
    tags.push(match[1] ?? '');
    rest = rest.slice(match[0].length);
  }
  return tags;
}

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

/**
 * True when a GET/HEAD may be answered 304. If-None-Match, when present and well-formed, decides alone
 * (RFC 9110 §13.1.3: If-Modified-Since is then ignored); its comparison is the weak one (§8.8.3.2), so
 * W/"x" matches "x". If-Modified-Since is compared in whole seconds; a malformed date is ignored.
 */
export function isNotModified(headers: ConditionalHeaders, validators: Validators): boolean {
  if (headers.ifNoneMatch !== undefined) {
    const tags = parseEntityTagList(headers.ifNoneMatch);
    if (tags !== undefined) {
      if (tags.includes('*')) return true;
      return tags.some((tag) => validators.opaqueTags.includes(tag));
    }
  }
  if (headers.ifModifiedSince !== undefined && headers.ifNoneMatch === undefined) {
    const since = parseHttpDate(headers.ifModifiedSince);
    if (since !== undefined) return wholeSeconds(validators.lastModified) <= wholeSeconds(since);
  }
  return false;
}
