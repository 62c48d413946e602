// How the job layer treats each way a sync can fail: permanent failures stop retrying (the stored reason says
// why), transient ones back off exponentially with jitter, and a long upstream rate limit hands the job back
// to the queue without spending an attempt.
import { coerceError } from '../lib/coerce-error.js';
import { LockLostError, LockTimeoutError } from '../lib/redis-lock.js';
import { redactText } from '../log.js';
import { ConnectionNotFoundError } from '../store/connections.js';
import { TokenVaultError } from '../store/token-vault.js';
import {
  UpstreamAuthError,
  UpstreamBadRequestError,
  UpstreamError,
  UpstreamRateLimitedError,
} from '../upstream/index.js';
import { NeedsReauthError } from './token-refresh.js';
import { SecondUnauthorizedError } from './upstream-session.js';

export interface FailureVerdict {
  code: string;
  message: string;
  permanent: boolean;
  /** Set for an upstream 429 that outlasted the in-job wait: hand the job back after this long. */
  rateLimitedMs?: number;
}

const MESSAGE_LIMIT = 500;

export function classifySyncFailure(thrown: unknown): FailureVerdict {
  const error = coerceError(thrown);
  const message = redactText(error.message).slice(0, MESSAGE_LIMIT);
  if (error instanceof NeedsReauthError) return { code: 'needs_reauth', message, permanent: true };
  if (error instanceof SecondUnauthorizedError) return { code: 'auth', message, permanent: true };
  // invalid_client and friends: our credentials are wrong; repeating the request cannot fix that.
  if (error instanceof UpstreamAuthError) return { code: 'auth', message, permanent: true };
  if (error instanceof UpstreamRateLimitedError) {
    return { code: 'rate_limited', message, permanent: false, rateLimitedMs: error.retryAfterMs ?? 1000 };
  }
  // The same request will be refused again: a bug or a wrong slots-parameter setting, not a passing fault.
  if (error instanceof UpstreamBadRequestError) return { code: 'bad_request', message, permanent: true };
  // Unavailable, not found (an event type deleted mid-sync), invalid payload: worth another attempt; an
  // invalid payload that persists through every attempt ends as a permanent failure with its reason.
  if (error instanceof UpstreamError) return { code: error.code, message, permanent: false };
  if (error instanceof ConnectionNotFoundError) return { code: 'connection_gone', message, permanent: true };
  if (error instanceof TokenVaultError) return { code: 'token_vault', message, permanent: true };
  if (error instanceof LockTimeoutError) return { code: 'lock_timeout', message, permanent: false };
  if (error instanceof LockLostError) return { code: 'lock_lost', message, permanent: false };
  return { code: 'internal', message, permanent: false };
}

/** Exponential backoff with "equal jitter": half the delay is fixed, half random, so retries spread out. */
export function retryDelayMs(
  attempt: number,
  baseMs: number,
  random: () => number,
  capMs = 15 * 60_000,
): number {
  const exponential = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}

/** When a connection is next due: the interval, moved by up to ± jitterRatio of it. */
export function nextSyncTime(
  now: Date,
  intervalSeconds: number,
  jitterRatio: number,
  random: () => number,
): Date {
  const jitter = (random() * 2 - 1) * jitterRatio;
  return new Date(now.getTime() + Math.round(intervalSeconds * 1000 * (1 + jitter)));
}
