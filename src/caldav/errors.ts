// Everything the CalDAV client throws for a failed request, one class per thing a caller does differently: ask the
// person for new credentials, re-read and retry a change, wait and retry, forget a vanished event, give up. `code`
// is stable (a push job switches on it), `retryable` says whether the same request may succeed later unchanged.
// Messages carry the method, the URL (which never holds credentials: the target policy refuses such URLs), the
// status and at most the name of a DAV precondition: never a response body, a header, or the password.
import { parseRetryAfter } from '../lib/retry-after.js';

export type CalDavErrorCode =
  | 'credentials'
  | 'precondition'
  | 'uid_conflict'
  | 'retry_later'
  | 'held_back'
  | 'not_found'
  | 'not_supported'
  | 'timeout'
  | 'unreachable'
  | 'target_refused'
  | 'other';

export interface CalDavRequestInfo {
  method: string;
  url: string;
}

interface ErrorInit {
  request?: CalDavRequestInfo | undefined;
  status?: number | undefined;
  /** The DAV:error precondition the server named (RFC 4918 §16, RFC 4791 §1.3), e.g. 'no-uid-conflict'. */
  condition?: string | undefined;
}

export abstract class CalDavError extends Error {
  abstract readonly code: CalDavErrorCode;
  abstract readonly retryable: boolean;
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly status: number | undefined;
  readonly condition: string | undefined;

  protected constructor(message: string, init: ErrorInit = {}) {
    super(message);
    this.name = new.target.name;
    this.method = init.request?.method;
    this.url = init.request?.url;
    this.status = init.status;
    this.condition = init.condition;
  }
}

/** 401, or 403 for lack of a privilege: the user name or password is wrong, or the account may not do this. */
export class CalDavCredentialsError extends CalDavError {
  readonly code = 'credentials' as const;
  readonly retryable = false;
  constructor(message: string, init: ErrorInit) {
    super(message, init);
  }
}

/**
 * 412: If-Match: the event changed since its ETag was read; If-None-Match: *: it exists already. Re-read the
 * calendar, then decide again.
 */
export class CalDavPreconditionError extends CalDavError {
  readonly code = 'precondition' as const;
  readonly retryable = false;
  constructor(message: string, init: ErrorInit) {
    super(message, init);
  }
}

/**
 * The calendar holds another resource with this UID (RFC 4791 §5.3.2.1: CALDAV:no-uid-conflict, which servers
 * answer with 403 or 409, and 409 Conflict alone): someone else's event. It is theirs; leave it alone.
 */
export class CalDavUidConflictError extends CalDavError {
  readonly code = 'uid_conflict' as const;
  readonly retryable = false;
  constructor(message: string, init: ErrorInit) {
    super(message, init);
  }
}

/** 429 or 503: the server asks to come back later, after `retryAfterMs` when it said (Retry-After). */
export class CalDavRetryLaterError extends CalDavError {
  readonly code = 'retry_later' as const;
  readonly retryable = true;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, init: ErrorInit & { retryAfterMs: number | undefined }) {
    super(message, init);
    this.retryAfterMs = init.retryAfterMs;
  }
}

/**
 * Nothing was sent: the host asked every client to come back later (a 429 or 503 with Retry-After to an earlier
 * request) and the caller's beforeRequest will not wait that long in the middle of its work (a worker's push
 * slot). Thrown by that hook (destinations/host-limits.ts), not by a server.
 */
export class CalDavHeldBackError extends CalDavError {
  readonly code = 'held_back' as const;
  readonly retryable = true;
  constructor(
    readonly host: string,
    readonly retryInMs: number,
  ) {
    super(`${host} asked to be called again in ${Math.ceil(retryInMs / 1000)} s: nothing was sent to it`);
  }
}

/** 404 or 410: the event or calendar is gone (deleted by the person, or the URL is wrong); or no CalDAV found. */
export class CalDavNotFoundError extends CalDavError {
  readonly code = 'not_found' as const;
  readonly retryable = false;
  constructor(message: string, init: ErrorInit = {}) {
    super(message, init);
  }
}

/** The server does not let this account do it here: MKCALENDAR refused, or no calendar home to make one in. */
export class CalDavNotSupportedError extends CalDavError {
  readonly code = 'not_supported' as const;
  readonly retryable = false;
  constructor(message: string, init: ErrorInit = {}) {
    super(message, init);
  }
}

/** No answer within the request's time limit. */
export class CalDavTimeoutError extends CalDavError {
  readonly code = 'timeout' as const;
  readonly retryable = true;
  readonly timeoutMs: number;
  constructor(request: CalDavRequestInfo, timeoutMs: number) {
    super(`${request.method} ${request.url} gave no answer within ${timeoutMs} ms`, { request });
    this.timeoutMs = timeoutMs;
  }
}

/** No connection: refused, reset, the name does not resolve. `detail` is the system's code, e.g. ECONNREFUSED. */
export class CalDavUnreachableError extends CalDavError {
  readonly code = 'unreachable' as const;
  readonly retryable = true;
  readonly detail: string;
  constructor(request: CalDavRequestInfo, detail: string) {
    super(`${request.method} ${request.url} could not reach the server (${detail})`, { request });
    this.detail = detail;
  }
}

/** The URL is not one slotfeed may connect to (the target policy), or not a usable URL at all. */
export class CalDavTargetError extends CalDavError {
  readonly code = 'target_refused' as const;
  readonly retryable = false;
  constructor(message: string) {
    super(message);
  }
}

/** Any other failure: another status, or an answer the client cannot read. 5xx other than 503 may pass later. */
export class CalDavRequestError extends CalDavError {
  readonly code = 'other' as const;
  readonly retryable: boolean;
  constructor(message: string, init: ErrorInit & { retryable?: boolean } = {}) {
    super(message, init);
    this.retryable = init.retryable ?? (init.status !== undefined && init.status >= 500);
  }
}

/**
 * The DAV:error element's first condition, by local name (namespace prefixes vary by server), or undefined. Read
 * with a pattern, not a parser: only the name is kept, and the body is never repeated.
 */
export function preconditionOf(body: string): string | undefined {
  const match = /<(?:[\w.-]+:)?error\b[^>]*>\s*<(?:[\w.-]+:)?([A-Za-z][\w.-]*)/.exec(body);
  return match?.[1];
}

export interface CalDavFailedResponse {
  status: number;
  headers: Headers;
  /** At most the first few KiB: read for the precondition's name only. */
  body: string;
}

function retryAfterText(ms: number | undefined): string {
  return ms === undefined ? 'no usable Retry-After' : `retry after ${Math.ceil(ms / 1000)} s`;
}

/** The typed error for a response with a status of 400 or above; `now` reads a Retry-After HTTP date. */
export function caldavErrorFor(
  request: CalDavRequestInfo,
  response: CalDavFailedResponse,
  now: Date,
): CalDavError {
  const { status } = response;
  const condition = preconditionOf(response.body);
  const init = { request, status, condition };
  const answered = `${request.method} ${request.url} answered ${status}${condition ? ` (${condition})` : ''}`;
  if (request.method === 'MKCALENDAR' && (status === 403 || status === 405 || status === 501)) {
    return new CalDavNotSupportedError(
      `${answered}: the server does not let this account create a calendar there`,
      init,
    );
  }
  if (status === 401) return new CalDavCredentialsError(`${answered}: the credentials were refused`, init);
  if (condition === 'no-uid-conflict' || (status === 409 && request.method === 'PUT')) {
    return new CalDavUidConflictError(`${answered}: the calendar holds another event with this UID`, init);
  }
  if (status === 412) return new CalDavPreconditionError(`${answered}: a precondition failed`, init);
  if (status === 403) {
    return condition === undefined || condition === 'need-privileges'
      ? new CalDavCredentialsError(`${answered}: this account may not do that`, init)
      : new CalDavRequestError(`${answered}: the server refused the request`, init);
  }
  if (status === 404 || status === 410) return new CalDavNotFoundError(`${answered}: not found`, init);
  if (status === 429 || status === 503) {
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), now);
    return new CalDavRetryLaterError(`${answered}: ${retryAfterText(retryAfterMs)}`, {
      ...init,
      retryAfterMs,
    });
  }
  return new CalDavRequestError(answered, init);
}
