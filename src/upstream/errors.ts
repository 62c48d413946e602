import { sanitizedExcerpt } from './body-excerpt.js';
import { parseRetryAfter } from '../lib/retry-after.js';

export { parseRetryAfter } from '../lib/retry-after.js';

export type UpstreamErrorCode =
  'auth' | 'rate_limited' | 'bad_request' | 'not_found' | 'unavailable' | 'invalid_payload';

interface UpstreamErrorInit {
  endpoint: string;
  status?: number | undefined;
  retryable: boolean;
}

/**
 * Everything the upstream client throws for a failed call. `code` is stable (the job layer switches on
 * it); `retryable` says whether the same request may succeed later without anyone changing anything.
 * Messages carry the endpoint and status, never a token, code or secret.
 */
export abstract class UpstreamError extends Error {
  abstract readonly code: UpstreamErrorCode;
  readonly endpoint: string;
  readonly status?: number;
  readonly retryable: boolean;

  protected constructor(message: string, init: UpstreamErrorInit) {
    super(message);
    this.name = new.target.name;
    this.endpoint = init.endpoint;
    if (init.status !== undefined) this.status = init.status;
    this.retryable = init.retryable;
  }
}

/**
 * Why the grant or token was refused. 'unauthorized' is a bare 401 from the API; the others are OAuth
 * error codes (RFC 6749 §5.2, RFC 6750 §3.1) read from the body or the WWW-Authenticate header.
 */
export type UpstreamAuthReason =
  | 'unauthorized'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'invalid_grant'
  | 'invalid_client'
  | 'unauthorized_client';

// Not retryable as-is: the job layer refreshes once on 'unauthorized'/'invalid_token' and marks the
// connection needs_reauth on 'invalid_grant'; repeating the same request changes nothing.
export class UpstreamAuthError extends UpstreamError {
  readonly code = 'auth' as const;
  readonly reason: UpstreamAuthReason;
  constructor(init: {
    endpoint: string;
    status?: number | undefined;
    reason: UpstreamAuthReason;
    excerpt?: string | undefined;
    /** Replaces the default message, for a refusal that happened on our side (nothing was sent). */
    message?: string;
  }) {
    const message =
      init.message ?? withExcerpt(`${init.endpoint} refused the credentials (${init.reason})`, init.excerpt);
    super(message, { ...init, retryable: false });
    this.reason = init.reason;
  }
}

export class UpstreamRateLimitedError extends UpstreamError {
  readonly code = 'rate_limited' as const;
  readonly retryAfterMs: number | undefined;
  constructor(init: { endpoint: string; status?: number | undefined; retryAfterMs: number | undefined }) {
    const wait =
      init.retryAfterMs === undefined ? 'no usable Retry-After' : `retry after ${init.retryAfterMs} ms`;
    super(`${init.endpoint} is rate limited (${wait})`, { ...init, retryable: true });
    this.retryAfterMs = init.retryAfterMs;
  }
}

export class UpstreamBadRequestError extends UpstreamError {
  readonly code = 'bad_request' as const;
  /** Sanitized, at most 200 characters; the body may be JSON or plain text. */
  readonly excerpt: string | undefined;
  constructor(init: { endpoint: string; status: number; excerpt: string | undefined }) {
    super(withExcerpt(`${init.endpoint} answered ${init.status}`, init.excerpt), {
      ...init,
      retryable: false,
    });
    this.excerpt = init.excerpt;
  }
}

export class UpstreamNotFoundError extends UpstreamError {
  readonly code = 'not_found' as const;
  constructor(init: { endpoint: string; status: number }) {
    super(`${init.endpoint} answered ${init.status}: not found`, { ...init, retryable: false });
  }
}

export type UpstreamUnavailableCause = 'status' | 'timeout' | 'network';

export class UpstreamUnavailableError extends UpstreamError {
  readonly code = 'unavailable' as const;
  // Shadows Error.cause on purpose (the brief names the field so); the underlying error's code, e.g.
  // ECONNREFUSED, is kept in `detail` instead.
  override readonly cause: UpstreamUnavailableCause;
  readonly detail: string | undefined;
  /** A 503 may carry Retry-After too; undefined when it does not. */
  readonly retryAfterMs: number | undefined;
  constructor(init: {
    endpoint: string;
    status?: number | undefined;
    cause: UpstreamUnavailableCause;
    detail?: string | undefined;
    retryAfterMs?: number | undefined;
  }) {
    super(withExcerpt(`${init.endpoint} is unavailable (${init.cause})`, init.detail), {
      ...init,
      retryable: true,
    });
    this.cause = init.cause;
    this.detail = init.detail;
    this.retryAfterMs = init.retryAfterMs;
  }
}

export class UpstreamInvalidPayloadError extends UpstreamError {
  readonly code = 'invalid_payload' as const;
  /** Where the first violation is, e.g. 'availability.disabled_dates.months[0]'; '(body)' for the body as a whole. */
  readonly path: string;
  readonly issue: string;
  // Retryable only when the body could not be read as JSON at all (a cut-off response is usually a
  // one-off); a schema violation repeats until someone changes the service or this client.
  constructor(init: {
    endpoint: string;
    status?: number | undefined;
    path: string;
    issue: string;
    retryable: boolean;
  }) {
    super(`${init.endpoint} returned an invalid payload at ${init.path}: ${init.issue}`, init);
    this.path = init.path;
    this.issue = init.issue;
  }
}

function withExcerpt(message: string, excerpt: string | undefined): string {
  return excerpt === undefined ? message : `${message}: ${excerpt}`;
}

const OAUTH_AUTH_ERRORS: readonly string[] = [
  'invalid_token',
  'insufficient_scope',
  'invalid_grant',
  'invalid_client',
  'unauthorized_client',
] satisfies UpstreamAuthReason[];

function isOAuthAuthError(code: string | undefined): code is UpstreamAuthReason {
  return code !== undefined && OAUTH_AUTH_ERRORS.includes(code);
}

// The statuses RFC 6749 §5.2 and RFC 6750 §3.1 answer OAuth errors with. A 5xx that happens to carry such
// a body stays unavailable (retryable): the server failed, the grant did not.
const OAUTH_ERROR_STATUSES: ReadonlySet<number> = new Set([400, 401, 403]);

/** The OAuth `error` code of a JSON body ({"error":"invalid_grant"}) or of a Bearer challenge header. */
function oauthErrorCode(headers: Headers, bodyText: string): string | undefined {
  try {
    const body: unknown = JSON.parse(bodyText);
    if (typeof body === 'object' && body !== null && 'error' in body && typeof body.error === 'string') {
      return body.error;
    }
  } catch {
    // not JSON: fall through to the header
  }
  return /\berror="?([a-z_]+)"?/i.exec(headers.get('www-authenticate') ?? '')?.[1]?.toLowerCase();
}

export interface UpstreamResponseFailure {
  endpoint: string;
  status: number;
  headers: Headers;
  /** Only the (size-limited) body of the failed response; success bodies never come here. */
  bodyText: string;
  now: Date;
  /** Values to blank out of any excerpt, e.g. the token or code that was sent. */
  secrets?: readonly string[];
}

/**
 * The one place an HTTP status becomes an error class:
 * - a 400/401/403 carrying an OAuth auth error in the body or WWW-Authenticate (invalid_grant,
 *   invalid_client, invalid_token, insufficient_scope, …) → auth: RFC 6749 answers them with 400, and the
 *   job layer must tell a dead grant from a malformed request;
 * - 401 → auth; 429 → rate_limited; 404 → not_found;
 * - 408 (the server gave up waiting for us) and 5xx → unavailable, retryable;
 * - 400 and every other 4xx (403 without an OAuth error, 405, 409, 410, 422, …) → bad_request: repeating
 *   the request unchanged will not help, and no finer class would change what the job layer does;
 * - anything else that is not 2xx (a 3xx fetch did not follow, a 1xx) → unavailable: we did not reach a
 *   usable answer, which is what a misbehaving proxy in between looks like.
 */
export function upstreamErrorFromResponse(input: UpstreamResponseFailure): UpstreamError {
  const { endpoint, status, headers, bodyText, now } = input;
  const excerpt = sanitizedExcerpt(bodyText, input.secrets ?? []);
  const oauthError = OAUTH_ERROR_STATUSES.has(status) ? oauthErrorCode(headers, bodyText) : undefined;
  if (isOAuthAuthError(oauthError)) {
    return new UpstreamAuthError({ endpoint, status, reason: oauthError, excerpt });
  }
  if (status === 401) return new UpstreamAuthError({ endpoint, status, reason: 'unauthorized', excerpt });
  if (status === 429) {
    return new UpstreamRateLimitedError({
      endpoint,
      status,
      retryAfterMs: parseRetryAfter(headers.get('retry-after'), now),
    });
  }
  if (status === 404) return new UpstreamNotFoundError({ endpoint, status });
  if (status === 408 || (status >= 500 && status <= 599)) {
    const retryAfterMs = parseRetryAfter(headers.get('retry-after'), now);
    return new UpstreamUnavailableError({
      endpoint,
      status,
      cause: 'status',
      detail: `status ${status}`,
      retryAfterMs,
    });
  }
  if (status >= 400 && status <= 499) return new UpstreamBadRequestError({ endpoint, status, excerpt });
  return new UpstreamUnavailableError({
    endpoint,
    status,
    cause: 'status',
    detail: `unexpected status ${status}`,
  });
}
