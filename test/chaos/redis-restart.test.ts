// Fault: the Redis behind the queues is killed mid-round and comes back empty (no persistence). Postgres is
// the source of truth for who is due, so every connection must still be synced once Redis returns, with no
// slot row lost or duplicated. A sync under way when Redis went keeps going (its commands wait for Redis), and
// its job is gone: the scheduler queues the connection again, and on a loaded machine the two syncs can overlap,
// as a job re-run after a stall can (docs/syncing.md). The pull tickets keep that harmless, an older pull never
// committing over a newer one; test/sync/pull-order.test.ts holds them to it with the order forced. Here what
// must hold is what a person sees: every connection's stored slots are the truth, none twice.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { expectedSync, storedOpenSlots } from '../support/sync-truth.js';
import { waitFor } from '../support/wait-for.js';
import { duplicateOpenSlots, startOwnRedis, type OwnRedis } from './chaos-support.js';
import { patient } from '../support/patience.js';

const HORIZON_DAYS = 14;
let redis: OwnRedis;
let h: SyncHarness;
const ids: string[] = [];

beforeAll(async () => {
  redis = await startOwnRedis();
  h = await createSyncHarness('chaos_redis', {
    clock: null,
    // Latency makes a round last long enough to be interrupted in the middle.
    simulator: { users: 10, faults: { latencyMs: 40, jitterMs: 40 } },
    env: {
      REDIS_URL: redis.url,
      SYNC_TICK_SECONDS: '1',
      SYNC_HORIZON_DAYS: String(HORIZON_DAYS),
      WORKER_CONCURRENCY: '2',
      SYNC_FETCH_CONCURRENCY: '2',
      WORKER_LOCK_SECONDS: '3',
    },
  });
  for (const user of h.sim.users) ids.push(await h.connect(user.email));
});
afterAll(async () => {
  await h?.close();
  await redis?.stop();
});

const syncedCount = async () =>
  h.clients.prisma.connection.count({ where: { id: { in: ids }, lastGoodSyncAt: { not: null } } });

describe('Redis killed and restarted mid-round', () => {
  it(
    'syncs every connection after Redis returns empty, losing and duplicating nothing',
    async () => {
      const peer = await h.spawnPeer();
      await h.startRoles(['scheduler', 'worker']);
      await h.startRoles(['worker'], peer);

      const before = await waitFor(syncedCount, (n) => n >= 2, {
        timeoutMs: 30_000,
        what: 'a round under way',
      });
      expect(before).toBeLessThan(ids.length);

      await redis.kill('SIGKILL');
      // Long enough for every client to notice and start reconnecting.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await redis.restart();

      await waitFor(syncedCount, (n) => n === ids.length, {
        timeoutMs: 60_000,
        what: 'every connection synced after Redis came back',
      });
      const now = new Date();
      for (const [i, id] of ids.entries()) {
        const email = h.sim.users[i]!.email;
        expect(await storedOpenSlots(h.clients.prisma, id, now)).toEqual(
          expectedSync(h.sim, email, now, HORIZON_DAYS).slots,
        );
      }
      expect(await duplicateOpenSlots(h.clients.prisma)).toBe(0);
      // The scheduler ticks again on the new, empty Redis: a connection made due now is picked up.
      await h.clients.prisma.connection.update({ where: { id: ids[0]! }, data: { nextSyncAt: new Date(0) } });
      const succeeded = () =>
        h.clients.prisma.syncRun.count({ where: { connectionId: ids[0]!, outcome: 'succeeded' } });
      const succeededBefore = await succeeded();
      await waitFor(succeeded, (n) => n > succeededBefore, {
        timeoutMs: 20_000,
        what: 'the scheduler to enqueue a due connection after the restart',
      });
    },
    patient(120_000),
  );
});
