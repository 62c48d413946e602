import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { refreshIfExpiring } from '../../src/sync/token-refresh.js';
import { syncConnection } from '../../src/sync/sync-connection.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';

let h: SyncHarness;
let clock: FakeClock;

beforeAll(async () => {
  clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));
  h = await createSyncHarness('tokens', {
    clock,
    simulator: { rotateRefreshTokens: true, accessTokenTtlSeconds: 3600 },
  });
});
afterAll(async () => {
  await h.close();
});

const tokenCalls = () => h.sim.control.callCounts()['POST /oauth2/token'] ?? 0;
const attempt = (connectionId: string) => ({ connectionId, jobId: null, attempt: 1, maxAttempts: 1 });

describe('token refresh', () => {
  it('refreshes an access token that expired before the run, once, and the run succeeds', async () => {
    const connectionId = await h.connect(h.sim.users[0]!.email);
    const before = await h.stores.connections.readTokens(connectionId);
    clock.advance(3700);
    h.sim.control.resetCallCounts();

    await syncConnection(h.services.syncDeps, attempt(connectionId));

    expect(tokenCalls()).toBe(1);
    const after = await h.stores.connections.readTokens(connectionId);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken); // rotation is on
    expect(after.expiresAt.getTime()).toBe(clock.now().getTime() + 3600_000);
    const runs = await h.clients.prisma.syncRun.findMany({ where: { connectionId } });
    expect(runs.map((r) => r.outcome)).toEqual(['succeeded']);
    expect(runs[0]!.callsByEndpoint).toMatchObject({ 'POST /oauth2/token': 1 });
  });

  it('spends a rotating refresh token exactly once when two workers sync the same connection at once', async () => {
    const connectionId = await h.connect(h.sim.users[1]!.email);
    const peer = await h.spawnPeer();
    clock.advance(3700);
    h.sim.control.resetCallCounts();

    const results = await Promise.allSettled([
      syncConnection(h.services.syncDeps, attempt(connectionId)),
      syncConnection(peer.services.syncDeps, attempt(connectionId)),
      refreshIfExpiring({ ...tokenDepsOf(peer.services.syncDeps) }, connectionId),
    ]);

    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(tokenCalls()).toBe(1);
    const connection = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    expect(connection.status).toBe('active');
  });

  it('marks a revoked grant needs_reauth without retrying, and leaves other connections alone', async () => {
    const revoked = await h.connect(h.sim.users[2]!.email);
    const healthy = await h.connect(h.sim.users[0]!.email);
    h.sim.control.revokeGrants(h.sim.users[2]!.id);
    clock.advance(3700);
    h.sim.control.resetCallCounts();

    await expect(
      syncConnection(h.services.syncDeps, { ...attempt(revoked), maxAttempts: 5 }),
    ).rejects.toMatchObject({
      verdict: { code: 'needs_reauth', permanent: true },
    });
    await syncConnection(h.services.syncDeps, attempt(healthy));

    const bad = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id: revoked } });
    const good = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id: healthy } });
    expect(bad.status).toBe('needs_reauth');
    expect(bad.lastSyncError).toMatch(/invalid_grant/);
    expect(good.status).toBe('active');
    expect(good.lastSyncOutcome).toBe('succeeded');
    // The tick never picks it up again, however due it is.
    await h.clients.prisma.connection.updateMany({ data: { nextSyncAt: new Date('2020-01-01T00:00:00Z') } });
    const due = (await h.stores.connections.findDue(clock.now(), 100)).map((row) => row.id);
    expect(due).not.toContain(revoked);
    expect(due).toContain(healthy);
    // A failed refresh is not retried: one token call for the revoked grant, one for the healthy one.
    expect(tokenCalls()).toBe(2);
  });
});

function tokenDepsOf(deps: typeof h.services.syncDeps) {
  return {
    connections: deps.connections,
    oauth: deps.upstreamFor({ onCall: () => undefined }).oauth,
    limiter: deps.limiter,
    redis: deps.redis,
    keyPrefix: deps.keyPrefix,
    marginMs: deps.settings.tokenRefreshMarginSeconds * 1000,
    now: deps.now,
    logger: deps.logger,
  };
}
