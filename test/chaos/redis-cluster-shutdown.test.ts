// A worker process and a scheduler process stopped after a Redis Cluster failover: three masters with a replica
// each, REDIS_SHARDS=8 so the workers' blocking fetches wait on every master. A master is killed and left down,
// its replica takes over, then both get SIGTERM: each must exit. BullMQ's Worker.close() may wait for ever
// there (src/lib/close-workers.ts); shutdown now bounds it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  killProcesses,
  startRoleProcess,
  startWorkerProcess,
  type SlotfeedProcess,
} from '../support/child-process.js';
import { patient } from '../support/patience.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { startOwnRedisCluster, type OwnRedisCluster } from './chaos-support.js';

let cluster: OwnRedisCluster;
let h: SyncHarness;
const children: SlotfeedProcess[] = [];

beforeAll(async () => {
  cluster = await startOwnRedisCluster(3, { replicas: 1 });
  h = await createSyncHarness('chaos_redis_cluster_shutdown', {
    env: {
      REDIS_CLUSTER_NODES: cluster.nodes,
      REDIS_PREFIX: '{slotfeed-shutdown}',
      REDIS_SHARDS: '8',
      WORKER_CONCURRENCY: '8',
      SHUTDOWN_GRACE_SECONDS: '2',
    },
  });
}, patient(60_000));
afterAll(async () => {
  await killProcesses(children);
  await h?.close();
  await cluster?.stop();
}, patient(30_000));

describe('a worker and a scheduler on a Redis Cluster', () => {
  it(
    'exit on SIGTERM after a master is killed, its replica promoted, and the master left down',
    async () => {
      const env = { ...h.env, LOG_LEVEL: 'info' };
      const before = await cluster.describe();
      const victim = before.find((node) => node.role === 'master')!;
      const replica = before.find((node) => node.masterId === victim.id)!;
      children.push(await startRoleProcess('scheduler', env));
      const worker = await startWorkerProcess(env);
      children.push(worker);
      // At once, while the worker's blocking connections are still finding their way around the cluster.
      await cluster.kill(victim.port);
      await waitFor(
        () => cluster.describe(),
        (nodes) => nodes.find((node) => node.id === replica.id)?.role === 'master',
        { timeoutMs: 30_000, what: `replica ${replica.port} promoted` },
      );

      worker.child.kill('SIGTERM');
      // The exit itself is awaited; jest's timeout is the only bound.
      const exit = await worker.exited;
      expect(exit).toEqual({ code: 0, signal: null });
    },
    patient(90_000),
  );
});
