// slotfeed spread over a Redis Cluster: three masters with a replica each, started on loopback, and REDIS_SHARDS=8,
// so the per-connection queues (syncs, CalDAV pushes, webhook deliveries) live under eight hash tags, which land
// on every master. The whole flow runs on it (accounts connected through the web flow, scheduled syncs, feeds
// served, a webhook delivered, a CalDAV push to Radicale) with keys and BullMQ's scripts on every master. Then a
// master is killed mid-round (SIGKILL, no persistence): its replica takes over after the cluster's node
// timeout, every job the round had on it runs to success once, no tick job commits twice, and the next round
// syncs every connection, on the promoted replica too. The killed node comes back as a replica.
// The worker and the scheduler run as `slotfeed` child processes, stopped by SIGTERM: after the failover
// BullMQ may leave a worker's close() pending for ever (src/lib/close-workers.ts), and in jest's own process its
// timers would keep jest from exiting; the CLI exits once its shutdown is done. The web role runs no BullMQ
// worker and stays in jest's process (the web harness), on the real clock the children read too.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from 'ioredis';
import { shardIndex, shardPrefix } from '../../src/lib/queue-shards.js';
import { startCalDavServer, type CalDavTestServer } from '../support/caldav-servers.js';
import { startRoleProcess, startWorkerProcess, type SlotfeedProcess } from '../support/child-process.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { patient } from '../support/patience.js';
import {
  duplicateOpenSlots,
  overlappingRuns,
  startOwnRedisCluster,
  type ClusterNode,
  type OwnRedisCluster,
} from './chaos-support.js';

// Its eight tags hash to slots on all three masters of a fresh three-master cluster (0–5460, 5461–10922,
// 10923–16383): shard 0 on the second, shards 2 and 6 on the first, 1 and 5 on the third.
const PREFIX = '{slotfeed-shards}';
const SHARDS = 8;
const USERS = 8;
// Connection ids are random, so eight of them may all land in shards of one master (that of shard 0, which the
// failover leaves alone: it holds the tick and the limiter). Spare users are connected until one lands elsewhere.
const SPARE_USERS = 8;
const DAY_MS = 24 * 3600 * 1000;

let cluster: OwnRedisCluster;
let caldav: CalDavTestServer;
let receiver: WebhookReceiver;
let h: WebHarness;
const children: SlotfeedProcess[] = [];
const connections: { connectionId: string; token: string }[] = [];
/** The hash slot of each shard's tag, read once the cluster is up. */
let shardSlots: number[];

const slotOf = (tag: string, client: Cluster) => client.cluster('KEYSLOT', tag) as Promise<number>;
const serves = (node: ClusterNode, slot: number) =>
  node.role === 'master' && node.slots.some(([first, last]) => first <= slot && slot <= last);

/** Calls of each command on the node at `port` (INFO commandstats), e.g. { evalsha: 120, get: 30 }. */
async function commandCalls(port: number): Promise<Record<string, number>> {
  const { stdout } = await promisify(execFile)('redis-cli', ['-p', String(port), 'info', 'commandstats']);
  return Object.fromEntries(
    [...stdout.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]),
  );
}

/** The hash slot of each shard's tag, read from the cluster. */
async function shardSlotsOf(): Promise<number[]> {
  const client = new Cluster(
    cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
    { redisOptions: { protocol: 2 } },
  );
  try {
    return await Promise.all(
      Array.from({ length: SHARDS }, (_, i) => slotOf(shardPrefix(PREFIX, i), client)),
    );
  } finally {
    client.disconnect();
  }
}

/** The shards the connected connections' syncs run in. */
const connectionShards = () => [...new Set(connections.map((c) => shardIndex(c.connectionId, SHARDS)))];

/**
 * The master to kill: one that runs syncs of a connected connection, not the one of REDIS_PREFIX's tag (shard 0),
 * so that the failover takes running syncs and leaves the tick and the limiter be. None while every connection
 * is in that master's shards.
 */
function victimOf(nodes: ClusterNode[]): ClusterNode | undefined {
  const first = nodes.find((node) => serves(node, shardSlots[0]!));
  return nodes.find((node) => node !== first && connectionShards().some((i) => serves(node, shardSlots[i]!)));
}

/** Connections whose last good sync is at or after `at`. */
const syncedSince = async (at: Date) =>
  h.sync.db.prisma.connection.count({ where: { lastGoodSyncAt: { gte: at } } });

/**
 * Makes every band of every connection due now, as a day on would (the child processes read the real clock, so
 * the test moves the due times instead of the clock); the scheduler's next tick starts the round. Returns when.
 */
async function scheduledRound(): Promise<Date> {
  const at = new Date();
  await h.sync.db.prisma.$executeRaw`
    UPDATE connection SET next_sync_at = ${at},
      band_state = (SELECT coalesce(jsonb_object_agg(key, value || jsonb_build_object('dueAt', ${at.toISOString()}::text)), '{}'::jsonb)
                      FROM jsonb_each(band_state::jsonb))`;
  return at;
}

/** Sends each child SIGTERM and waits for it to exit: shutdown must end on its own. */
async function stopChildren(): Promise<void> {
  for (const child of children) child.child.kill('SIGTERM');
  await Promise.all(children.map((child) => child.exited));
}

describe(`on a Redis Cluster of three masters with a replica each, REDIS_SHARDS=${SHARDS}`, () => {
  beforeAll(async () => {
    cluster = await startOwnRedisCluster(3, { replicas: 1 });
    caldav = await startCalDavServer('radicale');
    receiver = await startWebhookReceiver();
    h = await createWebHarness('chaos_redis_cluster_shards', {
      clock: null,
      simulator: { users: USERS + SPARE_USERS },
      env: {
        REDIS_CLUSTER_NODES: cluster.nodes,
        REDIS_PREFIX: PREFIX,
        REDIS_SHARDS: String(SHARDS),
        SYNC_TICK_SECONDS: '1',
        // Slow enough that a round's syncs are still running, waiting their turn, when the master is killed.
        UPSTREAM_RATE_LIMIT_PER_SECOND: '6',
        WORKER_CONCURRENCY: String(SHARDS),
        // No budget: a round's syncs all go at once, waiting only on the rate limit.
        SYNC_CALL_BUDGET_PER_SECOND: '0',
        // The default bands, each a day apart: nothing comes due between the test's own rounds.
        SYNC_BANDS: '2d=24h,4d=24h,7d=24h,*=24h',
        CALDAV_ALLOW_PRIVATE_TARGETS: 'true',
        CALDAV_DISPATCH_INTERVAL_MS: '200',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_DISPATCH_INTERVAL_MS: '200',
      },
    });
    const env = { ...h.sync.env, LOG_LEVEL: 'info' };
    children.push(await startRoleProcess('scheduler', env));
    children.push(await startWorkerProcess(env));
  }, patient(90_000));
  afterAll(async () => {
    await stopChildren();
    await h?.close();
    await receiver?.close();
    await caldav?.close();
    await cluster?.stop();
  }, patient(60_000));

  it(
    'connects, syncs on schedule, serves feeds, delivers a webhook and pushes to CalDAV, with keys and commands on every master',
    async () => {
      shardSlots = await shardSlotsOf();
      const topology = await cluster.describe();
      const users = [...h.sync.sim.users];
      while (connections.length < USERS || !victimOf(topology)) {
        const user = users.shift();
        if (!user) throw new Error('every connection landed in shards of the master of shard 0');
        const connected = await h.connectViaWeb(user.email);
        connections.push({ connectionId: connected.connectionId, token: connected.token! });
      }
      await waitFor(
        () => h.sync.db.prisma.connection.count({ where: { lastGoodSyncAt: { not: null } } }),
        (n) => n === connections.length,
        { timeoutMs: 90_000, what: 'the first sync of every connection' },
      );
      for (const { token } of connections) {
        const feed = await h.get(`/feeds/${token}.ics`);
        expect(feed.status).toBe(200);
        expect(feed.text).toContain('BEGIN:VEVENT');
      }

      // A webhook endpoint and a CalDAV calendar on the first connection.
      const first = connections[0]!;
      const endpoint = await h.sync.stores.webhooks.create({
        owner: { connectionId: first.connectionId },
        url: receiver.url,
      });
      receiver.setSecret(endpoint.secret);
      const feedId = (await h.feeds.findByToken(first.token))!.id;
      const destination = await h.sync.services.caldavDestinations.add({
        feedId,
        serverUrl: caldav.baseUrl,
        username: caldav.username,
        password: caldav.password,
      });

      // A booking the next scheduled round infers (of a slot more than two days ahead), and every band due:
      // the scheduler syncs every connection.
      const slot = await h.sync.db.prisma.slot.findFirstOrThrow({
        where: {
          connectionId: first.connectionId,
          goneAt: null,
          startsAt: { gt: new Date(Date.now() + 2 * DAY_MS) },
        },
        orderBy: [{ startsAt: 'asc' }, { upstreamEventId: 'asc' }],
      });
      h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
      const round = await scheduledRound();
      await waitFor(
        () => syncedSince(round),
        (n) => n === connections.length,
        {
          timeoutMs: 90_000,
          what: 'a scheduled sync of every connection',
        },
      );
      await receiver.until((requests) =>
        requests.some((r) => r.type === 'booking.inferred' && r.status < 300),
      );
      await waitFor(
        () => h.sync.stores.caldavDestinations.get(destination.id),
        (d) => d.lastPushAt !== null && d.pendingChanges === 0 && d.lastError === null,
        { timeoutMs: 60_000, what: 'the CalDAV destination pushed' },
      );

      // Keys of every kind of queue, and BullMQ's scripts, on every master.
      const client = new Cluster(
        cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
        { redisOptions: { protocol: 2 } },
      );
      try {
        await client.ping();
        const masters = (await cluster.describe()).filter((node) => node.role === 'master');
        expect(masters).toHaveLength(3);
        for (const master of masters) {
          expect(shardSlots.some((slot) => serves(master, slot))).toBe(true);
          const keys = await client
            .nodes('master')
            .find((n) => n.options.port === master.port)!
            .keys('*');
          expect(keys.some((key) => key.includes(':sync:'))).toBe(true);
          expect(keys.filter((key) => !/^\{slotfeed-shards(-\d+)?\}:/.test(key))).toEqual([]);
          expect((await commandCalls(master.port)).evalsha ?? 0).toBeGreaterThan(0);
        }
        const allKeys = (await Promise.all(client.nodes('master').map((node) => node.keys('*')))).flat();
        for (const queue of ['sync', 'webhooks', 'caldav']) {
          const tagsUsed = new Set(
            allKeys.filter((k) => k.includes(`}:${queue}:`)).map((k) => k.split(':')[0]),
          );
          expect(tagsUsed.size).toBeGreaterThan(1);
        }
      } finally {
        client.disconnect();
      }
    },
    patient(240_000),
  );

  it(
    'loses a master mid-round: its replica takes over, no job is lost, none commits twice, syncing goes on',
    async () => {
      // A settled cluster first: on a loaded machine a master can miss the node timeout before this test kills
      // one (a failover nobody asked for); its old master is then listed as the new one's replica only once it
      // has come back, and can take over only once it has the data (its link to the master up).
      const { nodes: before } = await waitFor(
        async () => {
          const nodes = await cluster.describe();
          const master = victimOf(nodes);
          const replica = master && nodes.find((node) => node.masterId === master.id && !node.failing);
          const linked =
            replica !== undefined &&
            (
              await promisify(execFile)('redis-cli', ['-p', String(replica.port), 'info', 'replication'])
            ).stdout.includes('master_link_status:up');
          return { nodes, settled: linked && !nodes.some((node) => node.failing) };
        },
        ({ settled }) => settled,
        { what: 'a settled cluster, the master to kill with a replica in sync' },
      );
      const victim = victimOf(before)!;
      const victimShards = connectionShards().filter((i) => serves(victim, shardSlots[i]!));
      const replica = before.find((node) => node.masterId === victim.id)!;
      const shards = victimShards.map((i) => h.sync.clients.syncShards.shards[i]!);

      const round = await scheduledRound();
      // Mid-round: a sync of a shard on that master running, and what else its shards hold.
      await waitFor(
        async () => (await Promise.all(shards.map((s) => s.getActiveCount()))).reduce((a, b) => a + b, 0),
        (active) => active > 0,
        { timeoutMs: 60_000, intervalMs: 20, what: `a sync running in shards ${victimShards.join(', ')}` },
      );
      const inFlight = (
        await Promise.all(shards.map((s) => s.getJobs(['active', 'waiting', 'delayed', 'prioritized'])))
      )
        .flat()
        .map((job) => job.id!);
      expect(inFlight.length).toBeGreaterThan(0);
      await cluster.kill(victim.port);

      // The replica is promoted once the others have missed the master for the node timeout.
      await waitFor(
        () => cluster.describe(),
        (nodes) => nodes.find((n) => n.id === replica.id)?.role === 'master',
        { timeoutMs: 30_000, what: `replica ${replica.port} promoted` },
      );

      // Every job the killed master held ran to success, once; every connection synced in the round.
      const succeededRuns = (jobId: string) =>
        h.sync.db.prisma.syncRun.count({ where: { jobId, outcome: 'succeeded' } });
      await waitFor(
        () => Promise.all(inFlight.map(succeededRuns)),
        (counts) => counts.every((n) => n >= 1),
        { timeoutMs: 120_000, what: `the ${inFlight.length} jobs of the killed master's shards to succeed` },
      );
      await waitFor(
        () => syncedSince(round),
        (n) => n === connections.length,
        {
          timeoutMs: 120_000,
          what: 'every connection synced in the round of the failover',
        },
      );
      const twice = await h.sync.db.prisma.$queryRaw<{ jobId: string; n: bigint }[]>`
      SELECT job_id AS "jobId", count(*) AS n FROM sync_run
       WHERE outcome = 'succeeded' AND job_id LIKE 'tick-%' GROUP BY job_id HAVING count(*) > 1`;
      expect(twice).toEqual([]);
      expect(await overlappingRuns(h.sync.db.prisma)).toEqual([]);
      expect(await duplicateOpenSlots(h.sync.db.prisma)).toBe(0);

      // Syncing goes on, with the promoted replica serving the killed master's shards.
      const scriptsBefore = (await commandCalls(replica.port)).evalsha ?? 0;
      const next = await scheduledRound();
      await waitFor(
        () => syncedSince(next),
        (n) => n === connections.length,
        {
          timeoutMs: 120_000,
          what: 'every connection synced after the failover',
        },
      );
      expect((await commandCalls(replica.port)).evalsha ?? 0).toBeGreaterThan(scriptsBefore);

      // The killed master comes back, empty, and rejoins as its old replica's replica.
      await cluster.restart(victim.port);
      await waitFor(
        () => cluster.describe(),
        (nodes) => nodes.find((n) => n.id === victim.id)?.masterId === replica.id,
        { timeoutMs: 30_000, what: `node ${victim.port} back as a replica` },
      );
    },
    patient(360_000),
  );
});
