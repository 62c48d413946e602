// What a failed push leaves a destination in, and when it is tried again. Declared once here:
// - credentials refused (401, 403 without a named condition): needs_credentials, and no retry at all until a
//   person replaces them (a wrong password retried every minute would lock the account on many servers);
// - the server asks to come back later (429, 503): after its Retry-After when it gave one, else the backoff;
// - anything else (no answer, refused connections, a 5xx, data refused): failing, retried with the backoff.
// The backoff doubles from RETRY_BASE_MS per consecutive failure up to RETRY_MAX_MS; a Retry-After is honoured
// up to RETRY_AFTER_MAX_MS (a server asking for a week is asked again sooner).
import type { CalDavErrorCode } from '../caldav/errors.js';

export const RETRY_BASE_MS = 30_000;
export const RETRY_MAX_MS = 60 * 60_000;
export const RETRY_AFTER_MAX_MS = 6 * 60 * 60_000;

/** What the metrics and the log call a failure's cause. */
export type FailureCause = CalDavErrorCode | 'feed';

export interface FailureOutcome {
  state: 'failing' | 'needs_credentials';
  cause: FailureCause;
  /** null: not before a person acts. */
  retryAt: Date | null;
  /** Said in the destination's last error and log: what happened, without secrets. */
  message: string;
}

/** The part of the CalDAV client's errors a push decides on (src/caldav/errors.ts). */
interface CodedError {
  code: CalDavErrorCode;
  message: string;
  retryAfterMs?: number | undefined;
}

/** The CalDAV client's error code of `error` ('not_found', 'precondition' …), or undefined for any other error. */
export const errorCode = (error: unknown): string | undefined =>
  error instanceof Error ? (error as { code?: unknown }).code?.toString() : undefined;

function isCoded(error: unknown): error is CodedError {
  return error instanceof Error && typeof (error as Partial<CodedError>).code === 'string';
}

/** The wait after the n-th consecutive failure (n ≥ 1). */
export function backoffMs(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, failures - 1));
}

/**
 * The outcome of a push that failed with `error`, the destination's `failures`-th in a row (this one counted).
 * Errors that are not the CalDAV client's (Postgres away, a feed that cannot be read) are retried like any.
 */
export function failureOutcome(error: unknown, failures: number, now: Date): FailureOutcome {
  const after = (ms: number) => new Date(now.getTime() + ms);
  if (!isCoded(error)) {
    return {
      state: 'failing',
      cause: 'feed',
      retryAt: after(backoffMs(failures)),
      message: `the push failed before reaching the server: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (error.code === 'credentials') {
    return {
      state: 'needs_credentials',
      cause: 'credentials',
      retryAt: null,
      message: `${error.message}; nothing is pushed until the credentials are replaced`,
    };
  }
  const wait =
    error.code === 'retry_later' && error.retryAfterMs !== undefined
      ? Math.min(error.retryAfterMs, RETRY_AFTER_MAX_MS)
      : backoffMs(failures);
  return {
    state: 'failing',
    cause: error.code,
    retryAt: after(wait),
    message: `${error.message}; tried again after ${Math.ceil(wait / 1000)} s`,
  };
}

/** How long a server asked every client of it to wait (a 429 or 503 with Retry-After), or undefined. */
export function hostHoldMs(error: unknown): number | undefined {
  return isCoded(error) && error.code === 'retry_later' && error.retryAfterMs !== undefined
    ? Math.min(error.retryAfterMs, RETRY_AFTER_MAX_MS)
    : undefined;
}
