// slotfeed on a Redis Cluster: three masters the test starts on loopback. With a hash-tagged REDIS_PREFIX every
// key of the installation is in one slot, so BullMQ's scripts and slotfeed's own (OAuth state, sessions, rate
// limits, the upstream rate limiter, locks) run unchanged: an account connects through the web flow, the
// scheduler and a worker sync it, and its feed is served. Without a hash tag, the configuration is refused.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from 'ioredis';
import { ConfigError, loadConfig } from '../../src/config.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { startOwnRedisCluster, type OwnRedisCluster } from './chaos-support.js';
import { patient } from '../support/patience.js';

const PREFIX = '{slotfeed-cluster}';
let cluster: OwnRedisCluster;
let h: WebHarness;

beforeAll(async () => {
  cluster = await startOwnRedisCluster(3);
  h = await createWebHarness('chaos_redis_cluster', {
    clock: null,
    env: {
      REDIS_CLUSTER_NODES: cluster.nodes,
      REDIS_PREFIX: PREFIX,
      SYNC_TICK_SECONDS: '1',
      // The upstream rate limiter's script runs too.
      UPSTREAM_RATE_LIMIT_PER_SECOND: '50',
    },
  });
  await h.sync.startRoles(['worker', 'scheduler']);
}, patient(60_000));
afterAll(async () => {
  await h?.close();
  await cluster?.stop();
});

describe('on a Redis Cluster', () => {
  it('connects an account, syncs it through the queue, and serves its feed', async () => {
    const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
    const synced = await waitFor(
      () => h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connected.connectionId } }),
      (c) => c.lastGoodSyncAt !== null,
      { timeoutMs: 60_000, what: 'the worker to sync the new connection' },
    );
    expect(synced.lastSyncOutcome).toBe('succeeded');
    const feed = await h.get(`/feeds/${connected.token}.ics`);
    expect(feed.status).toBe(200);
    expect(feed.text).toContain('BEGIN:VEVENT');
    // The owner's session, kept in the cluster, opens their page.
    expect((await h.get('/me', { cookie: connected.ownerCookie, accept: 'text/html' })).status).toBe(200);
  });

  it('keeps every key on the one slot of its hash tag', async () => {
    const client = new Cluster(
      cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
      { redisOptions: { protocol: 2 } },
    );
    try {
      await client.ping();
      const keys = (await Promise.all(client.nodes('master').map((node) => node.keys('*')))).flat();
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.filter((key) => !key.startsWith(PREFIX))).toEqual([]);
      expect(
        new Set(await Promise.all(keys.slice(0, 20).map((key) => client.cluster('KEYSLOT', key)))).size,
      ).toBe(1);
      expect(keys.some((key) => key.includes(':sync:'))).toBe(true);
      // And none on the single server the other tests use.
      expect(await h.sync.redis.connection.keys(`${PREFIX}*`)).toEqual([]);
    } finally {
      client.disconnect();
    }
  });

  it('refuses a cluster without a hash tag in the prefix, naming the fix', () => {
    expect(() =>
      loadConfig({ REDIS_CLUSTER_NODES: cluster.nodes, REDIS_PREFIX: 'slotfeed' }, ['redis']),
    ).toThrow(ConfigError);
    expect(() =>
      loadConfig({ REDIS_CLUSTER_NODES: cluster.nodes, REDIS_PREFIX: 'slotfeed' }, ['redis']),
    ).toThrow(/REDIS_PREFIX must hold a hash tag such as \{slotfeed\}/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'not a node' }, ['redis'])).toThrow(/host:port pairs/);
  });
});
