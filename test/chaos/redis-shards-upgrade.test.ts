// Raising REDIS_SHARDS on an installation with jobs queued: sync jobs enqueued under REDIS_SHARDS=1 (no worker
// running, as during a deploy) all still run, once each, when the workers come back with REDIS_SHARDS=8, though
// the connections they sync now belong to other shards: shard 0 keeps REDIS_PREFIX, so the old queue is one of
// the shards every worker consumes. A webhook delivery queued before the change is not handed over a second time
// by the lost-job sweep, which looks for it in shard 0 too.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { shardIndex } from '../../src/lib/queue-shards.js';
import { enqueueSyncs } from '../../src/sync/queues.js';
import { sweepLostDeliveries } from '../../src/webhooks/lost-deliveries.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { patient } from '../support/patience.js';
import { dispatchPending } from '../../src/webhooks/webhook-queue.js';

const USERS = 6;
let h: SyncHarness;
let connectionIds: string[];

beforeAll(async () => {
  h = await createSyncHarness('chaos_redis_shards_upgrade', { simulator: { users: USERS } });
  connectionIds = [];
  for (const user of h.sim.users) connectionIds.push(await h.connect(user.email));
}, patient(60_000));
afterAll(async () => {
  await h?.close();
});

describe('raising REDIS_SHARDS from 1 to 8 with jobs queued', () => {
  it('runs every job queued under one tag once, with the workers on eight', async () => {
    // Queued under REDIS_SHARDS=1, nothing taking them.
    const queued = await enqueueSyncs(h.clients.syncShards, connectionIds, 3);
    expect(h.clients.syncShards.shards).toHaveLength(1);
    expect(await h.clients.syncQueue.getWaitingCount()).toBe(USERS);
    // Under eight tags most of these connections belong to another shard than the one their job waits in.
    expect(connectionIds.filter((id) => shardIndex(id, 8) !== 0).length).toBeGreaterThan(0);

    // A webhook delivery handed over under one tag, waiting too.
    const made = await h.stores.webhooks.create({
      owner: { connectionId: connectionIds[0]! },
      url: 'https://receiver.example.com/hook',
    });
    const { id: deliveryId } = await h.stores.webhooks.sendTestEvent(made.endpoint.id, h.clock.now());
    await dispatchPending(
      h.stores.webhookDeliveries,
      h.clients.webhookShards,
      { maxAttempts: 3, retryBaseMs: 1000 },
      h.clock.now(),
    );
    expect(await h.clients.webhookQueue.getJob(deliveryId)).toBeDefined();

    // The daemon restarted with REDIS_SHARDS=8: its sweep finds the delivery where it waits.
    const upgraded = await h.spawnPeer({ REDIS_SHARDS: '8' });
    expect(upgraded.clients.syncShards.shards).toHaveLength(8);
    const swept = await sweepLostDeliveries(
      {
        deliveries: h.stores.webhookDeliveries,
        queue: upgraded.clients.webhookShards,
        queueConnection: upgraded.clients.redis,
        retry: { maxAttempts: 3, retryBaseMs: 1000 },
      },
      h.clock.now(),
    );
    expect(swept).toEqual({ handedOver: [], expired: [], givenUp: [] });

    await h.startRoles(['worker'], upgraded);
    const succeeded = (jobId: string) =>
      h.clients.prisma.syncRun.count({ where: { jobId, outcome: 'succeeded' } });
    const counts = await waitFor(
      () => Promise.all(queued.map((job) => succeeded(job.id!))),
      (n) => n.every((count) => count >= 1),
      { timeoutMs: 60_000, what: `the ${USERS} jobs queued under one tag to succeed` },
    );
    expect(counts).toEqual(queued.map(() => 1));
    expect(await h.clients.syncQueue.getCompletedCount()).toBe(USERS);

    // New jobs go to their connection's shard, and run there.
    const [later] = await enqueueSyncs(upgraded.clients.syncShards, [connectionIds[0]!], 3);
    const shard = upgraded.clients.syncShards.shardFor(connectionIds[0]!);
    expect(later!.queueQualifiedName).toBe(shard.qualifiedName);
    await waitFor(
      () => shard.getJobState(later!.id!),
      (state) => state === 'completed',
      { what: 'the sync queued under eight tags' },
    );
  });
});
