// Races around one token refresh, with refresh-token rotation on: the service revokes the whole grant when a
// rotated refresh token is presented twice, so "one token call, no reuse logged by the service" is the proof
// that two workers never spent the same refresh token.
// - A refresh slower than its lock's TTL: a saturated rate limiter, a 429 pause longer than the lock lives, a
//   token endpoint slower than the lock lives, and a second worker (a stalled job re-run) after the same token.
// - A reconnect committed while a refresh is in flight: the reconnect's tokens must stay.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Services } from '../../src/composition/services.js';
import { refreshIfExpiring } from '../../src/sync/token-refresh.js';
import { createApiClient, createOAuthClient, type OAuthClient } from '../../src/upstream/index.js';
import { createSyncHarness, FakeClock, REDIRECT_URI, type SyncHarness } from '../support/sync-harness.js';

/** Short, so a refresh outlives it without the test waiting long. */
const LOCK = { ttlMs: 300, waitMs: 15_000 };

let h: SyncHarness;
let clock: FakeClock;
const simWarnings: string[] = [];

beforeAll(async () => {
  clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));
  h = await createSyncHarness('refresh_races', {
    clock,
    simulator: {
      rotateRefreshTokens: true,
      accessTokenTtlSeconds: 3600,
      logger: { info: () => undefined, warn: (_obj, msg) => void simWarnings.push(msg ?? '') },
    },
    env: { UPSTREAM_RATE_LIMIT_PER_SECOND: '2', UPSTREAM_RATE_LIMIT_BURST: '1' },
  });
});
afterAll(async () => {
  await h?.close();
});

const tokenCalls = (userId: string) => h.sim.control.callCountsByUser()[userId]?.['POST /oauth2/token'] ?? 0;
const reuses = () => simWarnings.filter((m) => m.includes('reused'));

/** One worker's view of token refresh: its own Redis and Postgres connections, the shared limiter's keys. */
function tokenDepsOf(services: Services, oauth?: Pick<OAuthClient, 'refresh'>) {
  const deps = services.syncDeps;
  return {
    connections: deps.connections,
    oauth: oauth ?? deps.upstreamFor({ onCall: () => undefined }).oauth,
    limiter: deps.limiter,
    redis: deps.redis,
    keyPrefix: deps.keyPrefix,
    marginMs: deps.settings.tokenRefreshMarginSeconds * 1000,
    now: deps.now,
    logger: deps.logger,
    lock: LOCK,
  };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('a refresh that outlives its lock, two workers, rotation on', () => {
  it('spends the refresh token once: one token call, no reuse, the connection stays active', async () => {
    const user = h.sim.users[0]!;
    const id = await h.connect(user.email);
    const peer = await h.spawnPeer();
    clock.advance(3700);
    const callsBefore = tokenCalls(user.id);
    simWarnings.length = 0;

    // The token endpoint answers slower than the lock lives.
    h.sim.control.setFaults({ latencyMs: 3 * LOCK.ttlMs, only: ['POST /oauth2/token'] });
    // The shared limiter is saturated (its burst spent) and paused by a 429 for longer than the lock lives.
    await h.services.syncDeps.limiter.acquire();
    await h.services.syncDeps.limiter.pauseAll(4 * LOCK.ttlMs);

    const results = await Promise.allSettled([
      refreshIfExpiring(tokenDepsOf(h.services), id),
      refreshIfExpiring(tokenDepsOf(peer.services), id),
    ]);
    h.sim.control.setFaults({ latencyMs: 0 });

    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(tokenCalls(user.id) - callsBefore).toBe(1);
    expect(reuses()).toEqual([]);
    const connection = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id } });
    expect(connection.status).toBe('active');
    const stored = await h.stores.connections.readTokens(id);
    const [first, second] = results.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
    expect(first).toBe(stored.accessToken);
    expect(second).toBe(stored.accessToken);
    // The grant is alive: the API takes the refreshed token.
    const api = createApiClient({
      baseUrl: h.sim.baseUrl,
      timeoutMs: 3000,
      slotsQuery: { dateParam: 'date', timezoneParam: 'timezone' },
      now: clock.now,
    });
    await expect(api.getProfile(stored.accessToken)).resolves.toMatchObject({ email: user.email });
  });
});

describe('a reconnect while a refresh is in flight', () => {
  it("keeps the reconnect's tokens, and the refresh hands them out", async () => {
    const user = h.sim.users[1]!;
    const id = await h.connect(user.email);
    clock.advance(3700);

    // A worker's refresh whose answer, already given by the service, reaches it only after the user has
    // connected again: the transport holds the response, nothing else about the client changes.
    const answered = deferred();
    const reconnected = deferred();
    const slowToHear = createOAuthClient({
      authUrl: h.sim.authUrl,
      clientId: h.sim.clientId,
      clientSecret: h.sim.clientSecret,
      redirectUri: REDIRECT_URI,
      timeoutMs: 10_000,
      now: clock.now,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        answered.resolve();
        await reconnected.promise;
        return response;
      },
    });
    const refreshing = refreshIfExpiring(tokenDepsOf(h.services, slowToHear), id);

    await answered.promise;
    expect(await h.connect(user.email)).toBe(id);
    const reconnect = await h.stores.connections.readTokens(id);
    reconnected.resolve();
    const handedOut = await refreshing;

    const stored = await h.stores.connections.readTokens(id);
    expect(stored.refreshToken).toBe(reconnect.refreshToken);
    expect(stored.accessToken).toBe(reconnect.accessToken);
    expect(handedOut).toBe(reconnect.accessToken);
    const connection = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id } });
    expect(connection.status).toBe('active');
  });
});
