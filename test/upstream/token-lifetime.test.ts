import { describe, expect, it } from '@jest/globals';
import { DEFAULT_TOKEN_LIFETIME_MS, tokenLifetime, tokenSubject } from '../../src/upstream/token-lifetime.js';

const NOW = new Date('2026-03-02T09:00:00Z');
const nowSeconds = NOW.getTime() / 1000;

function jwt(claims: Record<string, unknown>): string {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJl`;
}

describe('tokenLifetime', () => {
  it('uses expires_in first, even when the JWT says otherwise', () => {
    const token = jwt({ exp: nowSeconds + 60 });
    expect(tokenLifetime({ expiresIn: 1800, accessToken: token, now: NOW })).toEqual({
      expiresAt: new Date('2026-03-02T09:30:00Z'),
      source: 'expires_in',
    });
  });

  it('falls back to the JWT exp − iat (skew-free) when expires_in is absent', () => {
    // The service's clock runs 10 minutes ahead of ours: exp − now would give 70 minutes, exp − iat is right.
    const serverNow = nowSeconds + 600;
    const token = jwt({ iat: serverNow, exp: serverNow + 3600 });
    expect(tokenLifetime({ expiresIn: undefined, accessToken: token, now: NOW })).toEqual({
      expiresAt: new Date('2026-03-02T10:00:00Z'),
      source: 'jwt_exp',
    });
  });

  it('uses exp − now for a JWT without iat', () => {
    const token = jwt({ exp: nowSeconds + 900 });
    expect(tokenLifetime({ expiresIn: undefined, accessToken: token, now: NOW }).expiresAt).toEqual(
      new Date('2026-03-02T09:15:00Z'),
    );
  });

  it('defaults to 60 minutes for an opaque token', () => {
    expect(tokenLifetime({ expiresIn: undefined, accessToken: 'opaque-token', now: NOW })).toEqual({
      expiresAt: new Date(NOW.getTime() + DEFAULT_TOKEN_LIFETIME_MS),
      source: 'default',
    });
    expect(DEFAULT_TOKEN_LIFETIME_MS).toBe(60 * 60 * 1000);
  });

  it('falls through a lifetime that is not usable instead of returning a token born expired', () => {
    expect(
      tokenLifetime({ expiresIn: undefined, accessToken: jwt({ exp: nowSeconds - 5 }), now: NOW }).source,
    ).toBe('default');
    expect(
      tokenLifetime({ expiresIn: 1e300, accessToken: jwt({ exp: nowSeconds + 60 }), now: NOW }).source,
    ).toBe('jwt_exp');
    expect(tokenLifetime({ expiresIn: undefined, accessToken: jwt({ exp: 'soon' }), now: NOW }).source).toBe(
      'default',
    );
  });
});

describe('tokenSubject', () => {
  it('reads sub from a JWT without verifying it', () => {
    expect(tokenSubject(jwt({ sub: 'user-7' }))).toBe('user-7');
  });

  it('is undefined for an opaque token or a JWT without a string sub', () => {
    expect(tokenSubject('opaque')).toBeUndefined();
    expect(tokenSubject(jwt({ sub: 7 }))).toBeUndefined();
  });
});
