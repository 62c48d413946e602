// The refresh margin never outgrows the token: TOKEN_REFRESH_MARGIN_SECONDS (300 s by default) is capped by
// the access token's lifetime, so against a service that issues 120 s tokens a connection is not refreshed at
// every sync (with rotation, each needless refresh is one more chance for a crash to cost the grant).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import { refreshMarginMs } from '../../src/sync/refresh-margin.js';
import { syncConnection } from '../../src/sync/sync-connection.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';

const TOKEN_SECONDS = 120;

describe('refreshMarginMs', () => {
  const jwt = async (claims: { iat?: number; exp?: number }) => {
    let token = new SignJWT({}).setProtectedHeader({ alg: 'HS256' });
    if (claims.iat !== undefined) token = token.setIssuedAt(claims.iat);
    if (claims.exp !== undefined) token = token.setExpirationTime(claims.exp);
    return token.sign(new Uint8Array(32));
  };
  const iat = Date.parse('2026-03-02T09:00:00Z') / 1000;

  it('keeps the configured margin for tokens that live long enough', async () => {
    expect(refreshMarginMs(300_000, await jwt({ iat, exp: iat + 3600 }))).toBe(300_000);
  });

  it('caps the margin at a quarter of a short-lived token’s lifetime', async () => {
    expect(refreshMarginMs(300_000, await jwt({ iat, exp: iat + 120 }))).toBe(30_000);
    expect(refreshMarginMs(300_000, await jwt({ iat, exp: iat + 600 }))).toBe(150_000);
  });

  it('keeps the configured margin when the token states no lifetime', async () => {
    expect(refreshMarginMs(300_000, 'an-opaque-token')).toBe(300_000);
    expect(refreshMarginMs(300_000, await jwt({ exp: iat + 120 }))).toBe(300_000);
    expect(refreshMarginMs(300_000, await jwt({ iat, exp: iat - 5 }))).toBe(300_000);
  });
});

let h: SyncHarness;
let clock: FakeClock;

beforeAll(async () => {
  clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));
  // Sync jitter from a fixed sequence: the gaps between syncs vary between 54 and 66 s, as in production.
  const draws = [0.1, 0.9, 0.5, 0.25, 0.75, 0, 1, 0.4];
  let draw = 0;
  clock.random = () => draws[draw++ % draws.length]!;
  h = await createSyncHarness('refresh_margin', {
    clock,
    simulator: { users: 1, rotateRefreshTokens: true, accessTokenTtlSeconds: TOKEN_SECONDS },
    env: {
      TOKEN_REFRESH_MARGIN_SECONDS: '300',
      SYNC_BANDS: '*=60s',
      SYNC_ADAPT_FACTORS: '1,1',
      SYNC_JITTER_RATIO: '0.1',
      SYNC_HORIZON_DAYS: '2',
    },
  });
});
afterAll(async () => {
  await h?.close();
});

describe('120 s access tokens with rotation, a sync every minute', () => {
  it('refreshes about once per token lifetime, never at connect time', async () => {
    const user = h.sim.users[0]!;
    const id = await h.connect(user.email);
    const connectedAt = clock.now().getTime();
    const tokenCalls = () => h.sim.control.callCountsByUser()[user.id]?.['POST /oauth2/token'] ?? 0;
    expect(tokenCalls()).toBe(1); // the code exchange

    for (let sync = 0; sync < 30; sync++) {
      // Each sync at the time the previous one scheduled (the first right at connect time).
      const { nextSyncAt } = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id } });
      clock.set(nextSyncAt.toISOString());
      await syncConnection(h.services.syncDeps, {
        connectionId: id,
        jobId: null,
        attempt: 1,
        maxAttempts: 1,
      });
    }

    const runs = await h.clients.prisma.syncRun.findMany({
      where: { connectionId: id },
      orderBy: { startedAt: 'asc' },
    });
    expect(runs).toHaveLength(30);
    expect(runs.filter((r) => r.outcome !== 'succeeded')).toEqual([]);
    const refreshedIn = runs.map(
      (r) => (r.callsByEndpoint as Record<string, number>)['POST /oauth2/token'] ?? 0,
    );
    expect(refreshedIn[0]).toBe(0);
    const refreshes = tokenCalls() - 1;
    expect(refreshedIn.reduce((a, b) => a + b, 0)).toBe(refreshes);
    const lifetimes = (clock.now().getTime() - connectedAt) / (TOKEN_SECONDS * 1000);
    expect(refreshes).toBeGreaterThanOrEqual(Math.floor(lifetimes) - 1);
    expect(refreshes).toBeLessThanOrEqual(Math.ceil(lifetimes));
    // Never two syncs in a row refreshed: each token served at least two syncs.
    expect(refreshedIn.some((n, i) => n > 0 && (refreshedIn[i - 1] ?? 0) > 0)).toBe(false);
  });
});
