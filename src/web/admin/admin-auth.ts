// Who may use the admin pages and the queue dashboard. Deny by default: with ADMIN_TOKEN empty every admin
// route answers 403. Otherwise a request is an administrator's when it carries `Authorization: Bearer
// <ADMIN_TOKEN>` or the signed session cookie the login form sets. Tokens are compared as SHA-256 digests
// with timingSafeEqual, so neither their content nor their length leaks through timing.
// A session lives on the server (admin-sessions.ts): signing out ends it for every copy of the cookie. Wrong
// tokens, from the form or in a bearer header, count towards a per-address lockout (sign-in-lockout.ts).
// Cookie sessions also need CSRF protection (a bearer header cannot be forged by another site): unsafe
// methods must come with an Origin, or failing that a Referer, of PUBLIC_BASE_URL's origin. SameSite=Strict
// alone would not do: it does not cover a sibling subdomain, which counts as the same site.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { redisUnavailableReason } from '../../lib/redis-errors.js';
import { noteForAccessLog } from '../access-log.js';
import type { AdminSessions } from './admin-sessions.js';
import { sendError } from '../error-handler.js';
import { HttpError } from '../http-error.js';
import type { SignInLockout } from './sign-in-lockout.js';

export const ADMIN_COOKIE = 'slotfeed_admin';
export const ADMIN_DISABLED = 'The admin pages are disabled: set ADMIN_TOKEN to enable them.';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
// v2: a session id and the expiry; v1 cookies (the expiry alone, nothing to revoke) are no longer accepted.
const COOKIE_VALUE = /^v2\.([A-Za-z0-9_-]{22,64})\.(\d{1,15})$/;

export type AdminCredential = 'bearer' | 'cookie';

export type SignInOutcome =
  | { kind: 'signed-in' }
  | { kind: 'wrong-token'; failures: number; lockedForSeconds: number }
  | { kind: 'locked-out'; retryAfterSeconds: number };

export interface AdminAuth {
  enabled: boolean;
  /** Secret that signs the session cookie; derived from ADMIN_TOKEN, so changing the token ends sessions. */
  cookieSecret: string;
  /**
   * How the request proves it is an administrator's, or undefined. A wrong bearer token counts towards the
   * lockout; throws HttpError 429 while the address is locked out, 503 when sessions cannot be checked.
   */
  credentialOf(request: FastifyRequest): Promise<AdminCredential | undefined>;
  /** Checks a token from the sign-in form (unless locked out) and starts a session when it is right. */
  signIn(request: FastifyRequest, reply: FastifyReply, candidate: string): Promise<SignInOutcome>;
  /** Ends the request's session on the server and clears the cookie. */
  endSession(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Throws 403 unless an unsafe request comes from our own origin. */
  assertSameOrigin(request: FastifyRequest): void;
  /** onRequest guard: 403 when admin is disabled, 401 without a credential, CSRF check for cookie sessions. */
  requireAdmin(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

export interface AdminAuthOptions {
  adminToken: string;
  publicBaseUrl: string;
  sessionSeconds: number;
  sessions: AdminSessions;
  lockout: SignInLockout;
  now: () => Date;
  /** Answers an unauthenticated request (the login form for browsers); the guard then stops the request. */
  onUnauthenticated(request: FastifyRequest, reply: FastifyReply): FastifyReply;
}

function lockedOut(retryAfterSeconds: number): HttpError {
  return new HttpError(
    429,
    `Too many wrong admin tokens from your address: try again in ${Math.ceil(retryAfterSeconds / 60)} minutes.`,
    { headers: { 'retry-after': String(retryAfterSeconds) } },
  );
}

/** Sessions live in Redis: without it they can be neither checked nor started (the bearer header still works). */
function sessionsUnavailable(): HttpError {
  return new HttpError(
    503,
    'Admin sessions cannot be used right now (Redis does not answer); try again shortly, or send Authorization: Bearer <ADMIN_TOKEN>.',
    { headers: { 'retry-after': '30' } },
  );
}

export function createAdminAuth(options: AdminAuthOptions): AdminAuth {
  const enabled = options.adminToken !== '';
  const expected = digest(options.adminToken);
  const publicOrigin = new URL(options.publicBaseUrl).origin;
  const secure = publicOrigin.startsWith('https:');
  const cookieSecret = createHmac('sha256', options.adminToken || 'admin disabled')
    .update('slotfeed admin session cookie v2')
    .digest('base64url');
  const cookieOptions = { path: '/', httpOnly: true, sameSite: 'strict', secure } as const;

  const isAdminToken = (candidate: string) =>
    enabled && candidate !== '' && timingSafeEqual(digest(candidate), expected);

  /** The live session id the request's cookie names, if its signature, expiry and server record agree. */
  async function sessionOf(request: FastifyRequest): Promise<string | undefined> {
    const raw = request.cookies[ADMIN_COOKIE];
    if (raw === undefined) return undefined;
    const unsigned = request.unsignCookie(raw);
    if (!unsigned.valid || unsigned.value === null) return undefined;
    const match = COOKIE_VALUE.exec(unsigned.value);
    // The expiry is checked here too, against the injected clock, besides the record's own TTL in Redis.
    if (match === null || Number(match[2]) <= options.now().getTime()) return undefined;
    const id = match[1] as string;
    try {
      return (await options.sessions.isLive(id)) ? id : undefined;
    } catch (thrown: unknown) {
      noteForAccessLog(request, 'warn', { redisUnavailable: redisUnavailableReason(thrown) ?? 'error' });
      throw sessionsUnavailable();
    }
  }

  async function credentialOf(request: FastifyRequest): Promise<AdminCredential | undefined> {
    if (!enabled) return undefined;
    const header = request.headers.authorization;
    if (header !== undefined) {
      // A wrong Authorization header is a failed attempt, not a reason to fall back to the cookie.
      const attempt = await options.lockout.attempt(request);
      if (!attempt.allowed) throw lockedOut(attempt.retryAfterSeconds);
      const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (bearer?.[1] !== undefined && isAdminToken(bearer[1])) {
        await attempt.succeeded();
        return 'bearer';
      }
      const { failures, lockedForSeconds } = await attempt.failed();
      noteForAccessLog(request, 'warn', { adminAuth: 'wrong bearer token', failures, lockedForSeconds });
      return undefined;
    }
    return (await sessionOf(request)) === undefined ? undefined : 'cookie';
  }

  function originOf(request: FastifyRequest): string | undefined {
    const origin = request.headers.origin;
    if (origin !== undefined) return origin;
    const referer = request.headers.referer;
    if (referer === undefined) return undefined;
    try {
      return new URL(referer).origin;
    } catch {
      return 'invalid';
    }
  }

  function assertSameOrigin(request: FastifyRequest): void {
    if (SAFE_METHODS.has(request.method)) return;
    if (originOf(request) !== publicOrigin) {
      throw new HttpError(
        403,
        `This form must be sent from ${publicOrigin} (checked against Origin/Referer to stop cross-site requests).`,
      );
    }
  }

  async function startSession(reply: FastifyReply): Promise<void> {
    const id = await options.sessions.start().catch(() => {
      throw sessionsUnavailable();
    });
    const expiresAt = options.now().getTime() + options.sessionSeconds * 1000;
    // Max-Age rather than Expires: the browser's clock decides, and ours (injected) may differ from it.
    reply.setCookie(ADMIN_COOKIE, `v2.${id}.${expiresAt}`, {
      ...cookieOptions,
      signed: true,
      maxAge: options.sessionSeconds,
    });
  }

  return {
    enabled,
    cookieSecret,
    credentialOf,
    async signIn(request, reply, candidate) {
      const attempt = await options.lockout.attempt(request);
      if (!attempt.allowed) return { kind: 'locked-out', retryAfterSeconds: attempt.retryAfterSeconds };
      if (!isAdminToken(candidate)) {
        const { failures, lockedForSeconds } = await attempt.failed();
        return { kind: 'wrong-token', failures, lockedForSeconds };
      }
      await attempt.succeeded();
      await startSession(reply);
      return { kind: 'signed-in' };
    },
    async endSession(request, reply) {
      const raw = request.cookies[ADMIN_COOKIE];
      const unsigned = raw === undefined ? undefined : request.unsignCookie(raw);
      const id = unsigned?.valid ? COOKIE_VALUE.exec(unsigned.value ?? '')?.[1] : undefined;
      if (id !== undefined) await options.sessions.end(id);
      reply.clearCookie(ADMIN_COOKIE, cookieOptions);
    },
    assertSameOrigin,
    async requireAdmin(request, reply) {
      // The guard answers by itself instead of throwing: it also guards Bull Board, whose plugin installs an
      // error handler of its own.
      if (!enabled) {
        return sendError(request, reply, 403, ADMIN_DISABLED);
      }
      let credential: AdminCredential | undefined;
      try {
        credential = await credentialOf(request);
        if (credential === 'cookie') assertSameOrigin(request);
      } catch (thrown: unknown) {
        if (!(thrown instanceof HttpError)) throw thrown;
        reply.headers(thrown.headers);
        return sendError(request, reply, thrown.statusCode, thrown.message);
      }
      if (credential === undefined) {
        reply.header('www-authenticate', 'Bearer realm="slotfeed admin"');
        // Returning the reply from an async hook is how fastify is told the request is answered.
        return options.onUnauthenticated(request, reply);
      }
      return undefined;
    },
  };
}
