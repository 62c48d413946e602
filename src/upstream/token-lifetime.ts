import { decodeJwt } from 'jose';

export const DEFAULT_TOKEN_LIFETIME_MS = 60 * 60 * 1000;

// new Date() beyond ±8.64e15 ms is an Invalid Date; a lifetime that would produce one is ignored.
const MAX_DATE_MS = 8.64e15;

export interface TokenLifetimeInput {
  /** expires_in of the token response, in seconds. */
  expiresIn: number | undefined;
  accessToken: string;
  /** When the token request was sent: the service started the clock no earlier than that. */
  now: Date;
}

export interface TokenLifetime {
  expiresAt: Date;
  source: 'expires_in' | 'jwt_exp' | 'default';
}

function jwtClaims(token: string): { exp?: unknown; iat?: unknown; sub?: unknown } | undefined {
  try {
    return decodeJwt(token);
  } catch {
    return undefined; // an opaque token: fine, it just has no claims to read
  }
}

function usableLifetime(ms: number, now: Date): Date | undefined {
  if (!Number.isFinite(ms) || ms <= 0 || now.getTime() + ms > MAX_DATE_MS) return undefined;
  return new Date(now.getTime() + ms);
}

/**
 * When the access token expires (docs/architecture.md: expires_in, else the JWT exp, else 60 minutes). No safety
 * margin is taken off: refreshing ahead of expiry is the job layer's business.
 * For a JWT the lifetime is exp − iat when both are present, because both are on the service's clock and
 * their difference is immune to skew between its clock and ours; else exp − now. A lifetime that is not
 * positive falls through to the next rule rather than producing a token that is born expired (which
 * would make the caller refresh in a loop).
 */
export function tokenLifetime(input: TokenLifetimeInput): TokenLifetime {
  const { expiresIn, accessToken, now } = input;
  if (expiresIn !== undefined) {
    const at = usableLifetime(expiresIn * 1000, now);
    if (at) return { expiresAt: at, source: 'expires_in' };
  }
  const claims = jwtClaims(accessToken);
  if (typeof claims?.exp === 'number') {
    const ms =
      typeof claims.iat === 'number' ? (claims.exp - claims.iat) * 1000 : claims.exp * 1000 - now.getTime();
    const at = usableLifetime(ms, now);
    if (at) return { expiresAt: at, source: 'jwt_exp' };
  }
  return { expiresAt: new Date(now.getTime() + DEFAULT_TOKEN_LIFETIME_MS), source: 'default' };
}

/**
 * How long the service made this access token live, when the token says so: a JWT's exp − iat, both on the
 * service's clock. Undefined for an opaque token or one without both claims.
 */
export function statedAccessTokenLifetimeMs(accessToken: string): number | undefined {
  const claims = jwtClaims(accessToken);
  if (typeof claims?.exp !== 'number' || typeof claims.iat !== 'number') return undefined;
  const ms = (claims.exp - claims.iat) * 1000;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/** The JWT `sub`, decoded without verifying the signature: we are not the token's audience, only its bearer. */
export function tokenSubject(accessToken: string): string | undefined {
  const sub = jwtClaims(accessToken)?.sub;
  return typeof sub === 'string' && sub !== '' ? sub : undefined;
}
