// Who may use the admin pages and the queue dashboard. Deny by default: with ADMIN_TOKEN empty every admin
// route answers 403. Otherwise a request is an administrator's when it carries `Authorization: Bearer
// <ADMIN_TOKEN>` or the signed session cookie the login form sets. Tokens are compared as SHA-256 digests
// with timingSafeEqual, so neither their content nor their length leaks through timing.
// Cookie sessions also need CSRF protection (a bearer header cannot be forged by another site): unsafe
// methods must come with an Origin, or failing that a Referer, of PUBLIC_BASE_URL's origin. SameSite=Strict
// alone would not do: it does not cover a sibling subdomain, which counts as the same site.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './error-handler.js';
import { HttpError } from './http-error.js';

export const ADMIN_COOKIE = 'slotfeed_admin';
export const ADMIN_DISABLED = 'The admin pages are disabled: set ADMIN_TOKEN to enable them.';
const SESSION_SECONDS = 12 * 60 * 60;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export type AdminCredential = 'bearer' | 'cookie';

export interface AdminAuth {
  enabled: boolean;
  /** Secret that signs the session cookie; derived from ADMIN_TOKEN, so changing the token ends sessions. */
  cookieSecret: string;
  /** How the request proves it is an administrator's, or undefined. */
  credentialOf(request: FastifyRequest): AdminCredential | undefined;
  isAdminToken(candidate: string): boolean;
  startSession(reply: FastifyReply): void;
  endSession(reply: FastifyReply): void;
  /** Throws 403 unless an unsafe request comes from our own origin. */
  assertSameOrigin(request: FastifyRequest): void;
  /** onRequest guard: 403 when admin is disabled, 401 without a credential, CSRF check for cookie sessions. */
  requireAdmin(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

export interface AdminAuthOptions {
  adminToken: string;
  publicBaseUrl: string;
  now: () => Date;
  /** Answers an unauthenticated request (the login form for browsers); the guard then stops the request. */
  onUnauthenticated(request: FastifyRequest, reply: FastifyReply): FastifyReply;
}

export function createAdminAuth(options: AdminAuthOptions): AdminAuth {
  const enabled = options.adminToken !== '';
  const expected = digest(options.adminToken);
  const publicOrigin = new URL(options.publicBaseUrl).origin;
  const secure = publicOrigin.startsWith('https:');
  const cookieSecret = createHmac('sha256', options.adminToken || 'admin disabled')
    .update('slotfeed admin session cookie v1')
    .digest('base64url');

  const isAdminToken = (candidate: string) =>
    enabled && candidate !== '' && timingSafeEqual(digest(candidate), expected);

  function sessionIsValid(request: FastifyRequest): boolean {
    const raw = request.cookies[ADMIN_COOKIE];
    if (raw === undefined) return false;
    const unsigned = request.unsignCookie(raw);
    if (!unsigned.valid || unsigned.value === null) return false;
    // The value is the session's expiry; the signature makes it unforgeable, the check makes it end.
    const match = /^v1\.(\d{1,15})$/.exec(unsigned.value);
    return match !== null && Number(match[1]) > options.now().getTime();
  }

  function credentialOf(request: FastifyRequest): AdminCredential | undefined {
    if (!enabled) return undefined;
    const header = request.headers.authorization;
    if (header !== undefined) {
      const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
      // A wrong Authorization header is a failed attempt, not a reason to fall back to the cookie.
      return bearer?.[1] !== undefined && isAdminToken(bearer[1]) ? 'bearer' : undefined;
    }
    return sessionIsValid(request) ? 'cookie' : undefined;
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

  return {
    enabled,
    cookieSecret,
    credentialOf,
    isAdminToken,
    startSession(reply) {
      const expiresAt = options.now().getTime() + SESSION_SECONDS * 1000;
      // Max-Age rather than Expires: the browser's clock decides, and ours (injected) may differ from it.
      reply.setCookie(ADMIN_COOKIE, `v1.${expiresAt}`, {
        signed: true,
        httpOnly: true,
        sameSite: 'strict',
        secure,
        path: '/',
        maxAge: SESSION_SECONDS,
      });
    },
    endSession(reply) {
      reply.clearCookie(ADMIN_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict', secure });
    },
    assertSameOrigin,
    async requireAdmin(request, reply) {
      // The guard answers by itself instead of throwing: it also guards Bull Board, whose plugin installs an
      // error handler of its own.
      if (!enabled) {
        return sendError(request, reply, 403, ADMIN_DISABLED);
      }
      const credential = credentialOf(request);
      if (credential === undefined) {
        reply.header('www-authenticate', 'Bearer realm="slotfeed admin"');
        // Returning the reply from an async hook is how fastify is told the request is answered.
        return options.onUnauthenticated(request, reply);
      }
      if (credential === 'cookie') {
        try {
          assertSameOrigin(request);
        } catch (thrown: unknown) {
          if (!(thrown instanceof HttpError)) throw thrown;
          return sendError(request, reply, thrown.statusCode, thrown.message);
        }
      }
      return undefined;
    },
  };
}
