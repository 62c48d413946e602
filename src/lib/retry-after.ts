// Retry-After (RFC 9110 §10.2.3) is either delta-seconds or an HTTP-date (any of its three spellings).
import { parseHttpDate } from '../lib/http-date.js';

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
  return at === undefined ? undefined : Math.max(0, at.getTime() - now.getTime());
}
