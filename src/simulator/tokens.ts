// Access tokens: HS256 JWTs signed with a per-world random secret, timed on the SIM clock so tests expire
// them with advanceClock instead of waiting. A world kept in a state file keeps its secret and the issuers it
// signed as (the issuer is the origin, whose port changes from start to start), so the access tokens it handed
// out before a restart still read the API after it, as a real service's would.
import { randomBytes } from 'node:crypto';
import { SignJWT, decodeJwt, errors, jwtVerify } from 'jose';
import type { SimClock } from './clock.js';
import type { IssuedCredential } from './types.js';

export const ACCESS_TOKEN_AUDIENCE = 'calendbook-api';

export interface AccessTokenClaims {
  sub: string;
  client_id: string;
  scope: string;
  jti: string;
  iat: number;
  exp: number;
}

export type VerifyResult = { ok: true; claims: AccessTokenClaims } | { ok: false; reason: string };

export interface AccessTokenIssuer {
  readonly ttlSeconds: number;
  /** The HMAC secret, base64url: what a state file keeps. */
  readonly signingKey: string;
  /** Every issuer this world signed as, the current one last. */
  issuers(): string[];
  issue(input: { userId: string; clientId: string; scope: string }): Promise<{ token: string; jti: string }>;
  /** Signature, issuer, audience and expiry; revocation is the grant store's business. */
  verify(token: string): Promise<VerifyResult>;
}

/** Tokens whose signature and claims were checked, kept at most this many (a sync round reuses a few). */
const VERIFIED_TOKENS_KEPT = 10_000;

export function createAccessTokenIssuer(options: {
  /** A function because the origin (and so the issuer) is known only once the server listens. */
  issuer: () => string;
  ttlSeconds: number;
  clock: SimClock;
  onIssued?: (credential: IssuedCredential) => void;
  /** An earlier issuer's signingKey and issuers(): its tokens stay valid. Absent: a new random secret. */
  restored?: { signingKey: string; issuers: string[] };
}): AccessTokenIssuer {
  const { issuer, ttlSeconds, clock, onIssued, restored } = options;
  const signingKey = restored?.signingKey ?? randomBytes(32).toString('base64url');
  const secret = new Uint8Array(Buffer.from(signingKey, 'base64url'));
  const issuers = () => [...new Set([...(restored?.issuers ?? []), issuer()])];
  // A sync makes dozens of calls with one token, and WebCrypto's HMAC check of each was a tenth of the demo
  // history's CPU. A token's signature, issuer and audience cannot change, so they are checked once; its
  // expiry is checked against the clock on every call, as jose does (expired once exp <= now, in seconds).
  const verified = new Map<string, AccessTokenClaims>();
  const expired = (claims: AccessTokenClaims) => claims.exp <= Math.floor(clock.nowMs() / 1000);
  return {
    ttlSeconds,
    signingKey,
    issuers,
    async issue({ userId, clientId, scope }) {
      const iat = Math.floor(clock.nowMs() / 1000);
      const jti = randomBytes(12).toString('base64url');
      const token = await new SignJWT({ scope, client_id: clientId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId)
        .setIssuer(issuer())
        .setAudience(ACCESS_TOKEN_AUDIENCE)
        .setIssuedAt(iat)
        .setExpirationTime(iat + ttlSeconds)
        .setJti(jti)
        .sign(secret);
      onIssued?.({ kind: 'access_token', value: token, userId });
      return { token, jti };
    },
    async verify(token) {
      const known = verified.get(token);
      if (known !== undefined) {
        return expired(known)
          ? { ok: false, reason: 'The access token expired' }
          : { ok: true, claims: known };
      }
      try {
        const { payload } = await jwtVerify(token, secret, {
          algorithms: ['HS256'],
          issuer: issuers(),
          audience: ACCESS_TOKEN_AUDIENCE,
          currentDate: new Date(clock.nowMs()),
          requiredClaims: ['sub', 'jti', 'exp', 'iat'],
        });
        const claims = payload as Partial<AccessTokenClaims>;
        if (typeof claims.sub !== 'string' || typeof claims.jti !== 'string') {
          return { ok: false, reason: 'The access token lacks required claims' };
        }
        if (verified.size >= VERIFIED_TOKENS_KEPT) verified.clear();
        verified.set(token, payload as unknown as AccessTokenClaims);
        return { ok: true, claims: payload as unknown as AccessTokenClaims };
      } catch (e: unknown) {
        if (e instanceof errors.JWTExpired) return { ok: false, reason: 'The access token expired' };
        if (e instanceof errors.JWSSignatureVerificationFailed) {
          return { ok: false, reason: 'The access token signature is invalid' };
        }
        return { ok: false, reason: 'The access token is malformed or not valid for this API' };
      }
    },
  };
}

/** Unverified read of a JWT claim, only for bookkeeping (rate-limit key, per-user call counts). */
export function peekClaim(token: string | null, claim: 'sub' | 'client_id'): string | null {
  if (!token) return null;
  try {
    const value = decodeJwt(token)[claim];
    return typeof value === 'string' ? value : null;
  } catch {
    return null;
  }
}

export function bearerTokenOf(authorization: string | undefined): string | null {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization ?? '');
  return match?.[1] ?? null;
}
