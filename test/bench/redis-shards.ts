// Redis traffic by hash tag (issue 42): how much of it REDIS_SHARDS spreads, and how much stays on REDIS_PREFIX's
// one tag (the tick, the upstream rate limiter, the call budget, the token-refresh lock: queue-shards.ts says
// why). One scheduled round of N connections, every band due, on a redis-server of its own with REDIS_SHARDS=8,
// the scheduler and a worker in this process, the upstream rate limiter on. Every command the server runs during
// the round is read from MONITOR and counted by the hash tag of its keys: the single tag (REDIS_PREFIX's, but not
// the keys of shard 0's queues, which are spread like the others), the shards' tags, and commands without a key
// (TIME, PING, INFO: on a cluster they go to any node). Top-level commands are a node's network load; the
// commands BullMQ's and slotfeed's scripts run inside Redis are counted apart (CPU, not round trips).
import { Redis } from 'ioredis';
import { shardPrefix } from '../../src/lib/queue-shards.js';
import { startOwnRedis } from '../chaos/chaos-support.js';
import { createSyncHarness, type FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { check, type BenchSection } from './bench-result.js';
import { round } from './process-stats.js';

const SHARDS = 8;
const PREFIX = '{bench-shards}';
const QUEUES = ['sync', 'webhooks', 'caldav'];

type Place = 'single' | 'sharded' | 'keyless';

/** Where a command's keys are: the single tag, a shard's, or none (its arguments name no key of the prefix). */
export function placeOf(args: readonly string[], prefix: string): Place {
  const tag = /\{[^{}]+\}/.exec(prefix)![0];
  const base = tag.slice(1, -1);
  for (const arg of args) {
    const found = /^[^{}]*\{([^{}]+)\}(.*)$/.exec(arg);
    if (!found) continue;
    const [, name, rest] = found;
    if (name === base) {
      // Shard 0's queues keep REDIS_PREFIX: spread like the other shards' (by connection), not single.
      return QUEUES.some((queue) => rest!.startsWith(`:${queue}:`)) ? 'sharded' : 'single';
    }
    if (name!.startsWith(`${base}-`)) return 'sharded';
  }
  return 'keyless';
}

export async function benchRedisShards(
  connections: number,
  rateLimitPerSecond: number,
): Promise<BenchSection[]> {
  const redis = await startOwnRedis();
  const h = await createSyncHarness('bench_redis_shards', {
    simulator: { users: connections, seed: 3, eventTypesPerUser: 3 },
    env: {
      REDIS_URL: redis.url,
      REDIS_PREFIX: PREFIX,
      REDIS_SHARDS: String(SHARDS),
      SYNC_TICK_SECONDS: '1',
      UPSTREAM_RATE_LIMIT_PER_SECOND: String(rateLimitPerSecond),
      WORKER_CONCURRENCY: String(SHARDS),
      // The clock stands still within a round: a budget would never refill.
      SYNC_CALL_BUDGET_PER_SECOND: '0',
    },
  });
  const monitor = new Redis(redis.url, { protocol: 2 });
  try {
    const ids: string[] = [];
    for (const user of h.sim.users) ids.push(await h.connect(user.email));
    await h.startRoles(['scheduler', 'worker']);
    const synced = (since: Date) =>
      h.clients.prisma.connection.count({ where: { lastGoodSyncAt: { gte: since } } });
    // The first round (every connection new) is not counted: it also reads each account once.
    const first = h.clock.now();
    await waitFor(
      () => synced(first),
      (n) => n === connections,
      { timeoutMs: 600_000, what: 'first syncs' },
    );

    const counts: Record<Place, number> = { single: 0, sharded: 0, keyless: 0 };
    const scripted: Record<Place, number> = { single: 0, sharded: 0, keyless: 0 };
    const byCommand = new Map<string, number>();
    const byShard = new Map<string, number>();
    const watching = await monitor.monitor();
    watching.on('monitor', (_time: string, args: string[], source: string) => {
      const place = placeOf(args, PREFIX);
      if (source === 'lua') {
        scripted[place]++;
        return;
      }
      counts[place]++;
      if (place === 'single') {
        const command = args[0]!.toLowerCase();
        byCommand.set(command, (byCommand.get(command) ?? 0) + 1);
      }
      if (place === 'sharded') {
        const tag = args.map((a) => /\{[^{}]+\}/.exec(a)?.[0]).find((t) => t !== undefined)!;
        byShard.set(tag, (byShard.get(tag) ?? 0) + 1);
      }
    });
    const runsBefore = await h.clients.prisma.syncRun.count({ where: { outcome: 'succeeded' } });
    (h.clock as FakeClock).advance(24 * 3600);
    const round2 = h.clock.now();
    await waitFor(
      () => synced(round2),
      (n) => n === connections,
      {
        timeoutMs: 600_000,
        what: 'the counted round',
      },
    );
    watching.disconnect();
    const syncs = (await h.clients.prisma.syncRun.count({ where: { outcome: 'succeeded' } })) - runsBefore;
    check(syncs >= connections, `${syncs} syncs in a round of ${connections} connections`);
    const total = counts.single + counts.sharded + counts.keyless;
    const perSync = (n: number) => round(n / syncs, 1);
    const shardLoads = Array.from(
      { length: SHARDS },
      (_, i) => byShard.get(shardPrefix(PREFIX, i).match(/\{[^{}]+\}/)![0]) ?? 0,
    );
    const topSingle = [...byCommand]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([command, n]) => `${command} ${perSync(n)}`)
      .join(', ');
    return [
      {
        benchmark: `Redis commands by hash tag (REDIS_SHARDS=${SHARDS})`,
        inputs: { connections, syncs, shards: SHARDS, rateLimitPerSecond },
        figures: {
          commandsPerSync: perSync(total),
          singleTagPerSync: perSync(counts.single),
          shardedPerSync: perSync(counts.sharded),
          keylessPerSync: perSync(counts.keyless),
          singleTagShare: round(counts.single / total, 3),
          busiestShardShare: round(Math.max(...shardLoads) / counts.sharded, 3),
          quietestShardShare: round(Math.min(...shardLoads) / counts.sharded, 3),
          singleTagTopCommands: topSingle,
          scriptedSingleTagPerSync: perSync(scripted.single),
          scriptedShardedPerSync: perSync(scripted.sharded),
        },
      },
    ];
  } finally {
    await monitor.quit().catch(() => undefined);
    await h.close();
    await redis.stop();
  }
}
