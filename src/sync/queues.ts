// The two BullMQ queues and the shape of their jobs: the sync queue, sharded by connection over REDIS_SHARDS
// hash tags (lib/queue-shards.ts), and the tick queue, one per installation. Job data carries ids only, never tokens: BullMQ keeps
// it in Redis as clear text.
// A queue is a producer: main.ts gives it the fail-fast command connection, as BullMQ advises for producers,
// so adding a job while Redis is down fails within seconds instead of waiting for Redis to come back.
import type { Job, JobsOptions, Queue } from 'bullmq';
import { z } from 'zod';
import { createObservedQueue, type QueueSettings } from '../lib/observed-queue.js';
import {
  asShards,
  groupByShard,
  openQueueShards,
  type QueueOrShards,
  type QueueShards,
} from '../lib/queue-shards.js';

export const SYNC_QUEUE = 'sync';
export const TICK_QUEUE = 'tick';
export const SYNC_JOB = 'sync-connection';
export const TICK_JOB = 'tick';
/** Custom backoff type: the delay is chosen (and recorded on the run row) by the failed attempt itself. */
export const SYNC_BACKOFF = 'slotfeed-sync';

export const syncJobDataSchema = z.object({
  connectionId: z.string().uuid(),
  /** The cadence bands to pull (the scheduler's choice); absent: every band. */
  bands: z.array(z.string()).min(1).optional(),
});
export type SyncJobData = z.infer<typeof syncJobDataSchema>;

export type { QueueSettings };

export function createSyncQueue(settings: QueueSettings): Queue<SyncJobData> {
  return createObservedQueue<SyncJobData>(SYNC_QUEUE, settings);
}

/** The sync queue over `count` hash tags, sharded by connection id (queue-shards.ts). */
export function createSyncQueueShards(settings: QueueSettings, count: number): QueueShards<SyncJobData> {
  return openQueueShards(settings.prefix, count, (prefix) => createSyncQueue({ ...settings, prefix }));
}

/** One tick queue per installation, on REDIS_PREFIX's tag: one job scheduler, so one tick runs at a time. */
export function createTickQueue(settings: QueueSettings): Queue {
  return createObservedQueue(TICK_QUEUE, settings);
}

function syncDeduplicationId(connectionId: string): string {
  return `sync:${connectionId}`;
}

/**
 * Which of `connectionIds` have a sync job waiting, delayed (a retry in backoff) or running. BullMQ holds a
 * job's deduplication id until it completes or fails for good, but the key can outlive its job (the job's
 * keys evicted or lost while the key stayed): BullMQ clears such a stale key only when the next job is added,
 * so a connection counted as queued on the key alone would never be enqueued again. A connection counts only
 * while the job its key names exists and has not finished. Two round trips however many connections: the
 * keys, then the jobs they name (each job read by key, not by searching BullMQ's lists for it).
 */
export async function connectionsWithQueuedSync(
  queue: QueueOrShards<SyncJobData>,
  connectionIds: readonly string[],
): Promise<Set<string>> {
  // A connection's deduplication key and job are in its shard: two round trips per shard, run side by side.
  const found = await Promise.all(
    groupByShard(asShards(queue), connectionIds, (id) => id).map(({ shard, items }) =>
      queuedInShard(shard, items),
    ),
  );
  return new Set(found.flat());
}

async function queuedInShard(queue: Queue<SyncJobData>, connectionIds: readonly string[]): Promise<string[]> {
  const holders = await Promise.all(
    connectionIds.map((id) => queue.getDeduplicationJobId(syncDeduplicationId(id))),
  );
  const client = await queue.getBackend().client;
  const unfinished = await Promise.all(
    holders.map(async (jobId) => {
      if (typeof jobId !== 'string') return false;
      // Every job hash has a timestamp; finishedOn is set when it completes or fails for good.
      const [timestamp, finishedOn] = await client.hmget(queue.toKey(jobId), 'timestamp', 'finishedOn');
      return timestamp !== null && finishedOn === null;
    }),
  );
  return connectionIds.filter((_, i) => unfinished[i]);
}

/**
 * Deduplicated by connection id until the job completes or fails for good, so a connection never has two
 * sync jobs waiting or running, however many ticks, CLI calls or retries pile up.
 */
export function syncJobOptions(connectionId: string, maxAttempts: number): JobsOptions {
  return {
    deduplication: { id: syncDeduplicationId(connectionId) },
    attempts: maxAttempts,
    backoff: { type: SYNC_BACKOFF },
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
  };
}

/**
 * Enqueues a whole sync of each connection, now (a person asked: `slotfeed sync`, Sync now, a reconnect).
 * Deduplicated: a connection that already has a job keeps it, but that job is made to mean what was asked.
 * A retry waiting out its backoff is promoted to run now (a global 429 pause still holds: the rate limiter
 * waits it out), and a waiting job of the scheduler's that pulls only some bands pulls every band. A job
 * already running finishes as it began. Returns the jobs, existing ones for duplicates.
 */
export async function enqueueSyncs(
  queue: QueueOrShards<SyncJobData>,
  connectionIds: readonly string[],
  maxAttempts: number,
): Promise<Job<SyncJobData>[]> {
  if (connectionIds.length === 0) return [];
  const byConnection = new Map<string, Job<SyncJobData>>();
  await Promise.all(
    groupByShard(asShards(queue), connectionIds, (id) => id).map(async ({ shard, items }) => {
      const jobs = await shard.addBulk(
        items.map((connectionId) => ({
          name: SYNC_JOB,
          data: { connectionId },
          opts: syncJobOptions(connectionId, maxAttempts),
        })),
      );
      items.forEach((id, i) => byConnection.set(id, jobs[i]!));
      await Promise.all(
        jobs.map((job) => (job.id === undefined ? undefined : runWholeAndNow(shard, job.id))),
      );
    }),
  );
  return connectionIds.map((id) => byConnection.get(id)!);
}

async function runWholeAndNow(queue: Queue<SyncJobData>, jobId: string): Promise<void> {
  const job = await queue.getJob(jobId);
  if (!job) return;
  const state = await job.getState();
  if (state !== 'waiting' && state !== 'delayed' && state !== 'prioritized') return;
  if (job.data.bands !== undefined) await job.updateData({ connectionId: job.data.connectionId });
  if (state !== 'delayed') return;
  try {
    await job.promote();
  } catch (thrown: unknown) {
    // Its backoff ended (or a worker took it) between the two reads: it runs now anyway.
    if ((await job.getState()) === 'delayed') throw thrown;
  }
}

/**
 * Enqueues the scheduler's picks: each a connection and the bands to pull. Returns the picks whose job is
 * new; a connection that already had a job waiting or running keeps that one. Each job is given an id made
 * of `batchId` and its connection, so a duplicate shows as BullMQ handing back another job's id.
 */
export async function enqueueBandSyncs(
  queue: QueueOrShards<SyncJobData>,
  picks: readonly SyncJobData[],
  maxAttempts: number,
  batchId: string,
): Promise<SyncJobData[]> {
  if (picks.length === 0) return [];
  const jobIdOf = (pick: SyncJobData) => `${batchId}-${pick.connectionId}`;
  const added = new Set<SyncJobData>();
  await Promise.all(
    groupByShard(asShards(queue), picks, (pick) => pick.connectionId).map(async ({ shard, items }) => {
      const jobs = await shard.addBulk(
        items.map((data) => ({
          name: SYNC_JOB,
          data,
          opts: { ...syncJobOptions(data.connectionId, maxAttempts), jobId: jobIdOf(data) },
        })),
      );
      items.forEach((pick, i) => {
        if (jobs[i]?.id === jobIdOf(pick)) added.add(pick);
      });
    }),
  );
  return picks.filter((pick) => added.has(pick));
}
