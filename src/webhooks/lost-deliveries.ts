// Deliveries the queue has lost. Postgres, not Redis, says what is left to deliver: a row handed over but neither
// delivered nor given up whose job Redis no longer has was lost with it (Redis restarted empty, its keys
// deleted); one whose job is in the failed set ran out of attempts or stalled too often, and only its marking
// was lost (a worker died before its failure handler ran). The sweep hands the first over again, or gives it
// up when its event is older than the whole retry window (sending it now, with a fresh set of attempts, would
// deliver day-old news for another day), and gives up the second with the queue's reason.
//
// A pass reads every pending row, a batch at a time: one Postgres query and one Redis round trip per batch.
// Losing jobs is rare and pending rows can be many (a failing endpoint's wait out their retries), so the
// worker sweeps at its own slow cadence, when the queue's connection is ready again, and when the marker key
// the last pass left is gone: a look at one key per dispatch interval notices that the queue's keys vanished
// (FLUSHDB, a failover to an empty replica) without a reconnect to tell.
//
// With the queue sharded (REDIS_SHARDS) a delivery's job is in its own shard, or in shard 0 where every job was
// before REDIS_SHARDS was raised: the sweep looks in both, so raising it never sends a pending delivery twice.
// Each shard has its marker: a node of a cluster that lost its keys takes only its shards' markers along.
import type { Queue } from 'bullmq';
import { asShards, groupByShard, type QueueOrShards } from '../lib/queue-shards.js';
import type { RedisClient } from '../lib/redis-connection.js';
import type { SweepCursor, WebhookDeliveryStore } from '../store/webhook-deliveries.js';
import {
  retryWindowMs,
  webhookJobOptions,
  WEBHOOK_JOB,
  type WebhookJobData,
  type WebhookRetrySettings,
} from './webhook-jobs.js';

export type { SweepCursor };

export interface LostDeliveryDeps {
  deliveries: WebhookDeliveryStore;
  queue: QueueOrShards<WebhookJobData>;
  /** The queue's Redis connection: the sweep reads job keys on it in pipelines, one per shard. */
  queueConnection: RedisClient;
  retry: WebhookRetrySettings;
}

export interface LostDeliveries {
  /** Rows whose job the queue no longer had: handed over again. */
  handedOver: string[];
  /** Rows whose job the queue no longer had, older than the retry window: given up. */
  expired: string[];
  /** Rows whose job had failed for good with the row still pending: given up. */
  givenUp: string[];
  /** Where the next batch starts; undefined when this one reached the end. */
  next: SweepCursor | undefined;
}

/** The reason a delivery lost after its retry window is given up with. */
export const LOST_AFTER_RETRY_WINDOW = 'lost from the queue after its retry window';

const SWEEP_START: SweepCursor = { createdAt: new Date(0), id: '00000000-0000-0000-0000-000000000000' };

type JobPresence = { state: 'present' | 'failed'; shard: Queue<WebhookJobData> } | { state: 'missing' };

/** The shards a delivery's job may be in: its own, and shard 0 (where jobs queued before sharding stay). */
function shardsToLookIn(queue: QueueOrShards<WebhookJobData>, id: string): Queue<WebhookJobData>[] {
  const shards = asShards(queue);
  const own = shards.shardFor(id);
  const home = shards.shards[0]!;
  return own === home ? [own] : [own, home];
}

/** Whether one shard has each id's job, and whether it failed for good: one round trip. */
async function presenceInShard(
  connection: RedisClient,
  shard: Queue<WebhookJobData>,
  ids: readonly string[],
): Promise<('present' | 'failed' | 'missing')[]> {
  const failedSet = shard.toKey('failed');
  const pipeline = connection.pipeline();
  for (const id of ids) pipeline.exists(shard.toKey(id)).zscore(failedSet, id);
  const replies = (await pipeline.exec()) ?? [];
  return ids.map((id, i) => {
    const [existsError, exists] = replies[2 * i] ?? [new Error(`no reply for job ${id}`)];
    const [failedError, failedScore] = replies[2 * i + 1] ?? [new Error(`no reply for job ${id}`)];
    const error = existsError ?? failedError;
    if (error) throw error;
    if (exists === 0) return 'missing';
    return failedScore === null ? 'present' : 'failed';
  });
}

/**
 * For each id, whether the queue still has its job (and in which shard), and whether that job failed for good:
 * one round trip per shard (a pipeline's keys must share a slot on a cluster).
 */
async function jobPresence(deps: LostDeliveryDeps, ids: readonly string[]): Promise<JobPresence[]> {
  if (ids.length === 0) return [];
  const lookups = ids.flatMap((id) => shardsToLookIn(deps.queue, id).map((shard) => ({ id, shard })));
  const byShard = new Map<Queue<WebhookJobData>, string[]>();
  for (const { id, shard } of lookups) byShard.set(shard, [...(byShard.get(shard) ?? []), id]);
  const found = new Map<string, JobPresence>();
  await Promise.all(
    [...byShard].map(async ([shard, shardIds]) => {
      const states = await presenceInShard(deps.queueConnection, shard, shardIds);
      shardIds.forEach((id, i) => {
        const state = states[i]!;
        if (state !== 'missing' && found.get(id)?.state !== 'present') found.set(id, { state, shard });
      });
    }),
  );
  return ids.map((id) => found.get(id) ?? { state: 'missing' });
}

/**
 * Gives up a delivery whose job the queue failed for good: with the last attempt's error when its attempts are
 * spent (the row holds it already), else with the queue's reason (a job that stalled too often).
 */
async function giveUpFailedJob(
  deps: Pick<LostDeliveryDeps, 'deliveries'>,
  shard: Queue<WebhookJobData>,
  deliveryId: string,
  now: Date,
): Promise<void> {
  const job = await shard.getJob(deliveryId);
  const attemptsLeft = job !== undefined && job.attemptsMade < (job.opts.attempts ?? 1);
  await deps.deliveries.giveUp(
    deliveryId,
    now,
    attemptsLeft ? `the queue gave up: ${job.failedReason}` : undefined,
  );
}

/**
 * One batch of the sweep over rows handed over but neither delivered nor given up. The row is what counts:
 * every outcome of an attempt is written on it before its job completes, and a job exists before its row says
 * it was handed over. So a row still pending once its job is seen gone was lost with Redis. The row is read
 * again after its job (a job can complete, and be removed, between the two reads). No grace period is needed
 * for the same reasons.
 */
export async function handOverLostDeliveries(
  deps: LostDeliveryDeps,
  now: Date,
  after: SweepCursor | undefined,
  batch = 200,
): Promise<LostDeliveries> {
  const { deliveries, queue } = deps;
  const rows = await deliveries.handedOverPending(after ?? SWEEP_START, batch);
  const last = rows.at(-1);
  const next = rows.length === batch && last ? last : undefined;
  const presence = await jobPresence(
    deps,
    rows.map((row) => row.id),
  );
  const suspects = rows.filter((_, i) => presence[i]!.state !== 'present').map((r) => r.id);
  if (suspects.length === 0) return { handedOver: [], expired: [], givenUp: [], next };
  const pending = await deliveries.stillPending(suspects);
  const windowMs = retryWindowMs(deps.retry);
  const lost = rows.filter((row, i) => presence[i]!.state === 'missing' && pending.has(row.id));
  const expired = lost.filter((row) => now.getTime() - row.createdAt.getTime() > windowMs).map((r) => r.id);
  const handedOver = lost.map((r) => r.id).filter((id) => !expired.includes(id));
  const failed = rows.flatMap((row, i) => {
    const found = presence[i]!;
    return found.state === 'failed' && pending.has(row.id) ? [{ id: row.id, shard: found.shard }] : [];
  });
  if (handedOver.length > 0) {
    await Promise.all(
      groupByShard(asShards(queue), handedOver, (id) => id).map(({ shard, items }) =>
        shard.addBulk(
          items.map((id) => ({
            name: WEBHOOK_JOB,
            data: { deliveryId: id },
            opts: webhookJobOptions(id, deps.retry),
          })),
        ),
      ),
    );
    await deliveries.markHandedOver(handedOver, now);
  }
  const hours = Math.round(windowMs / 360_000) / 10;
  for (const id of expired) {
    await deliveries.giveUp(id, now, `${LOST_AFTER_RETRY_WINDOW} (${hours} h); not sent again`);
  }
  for (const { id, shard } of failed) await giveUpFailedJob(deps, shard, id, now);
  return { handedOver, expired, givenUp: failed.map(({ id }) => id), next };
}

/** A whole pass: every pending row, batch after batch; what it found. */
export async function sweepLostDeliveries(
  deps: LostDeliveryDeps,
  now: Date,
): Promise<Omit<LostDeliveries, 'next'>> {
  const found: Omit<LostDeliveries, 'next'> = { handedOver: [], expired: [], givenUp: [] };
  let from: SweepCursor | undefined;
  do {
    const batch = await handOverLostDeliveries(deps, now, from);
    found.handedOver.push(...batch.handedOver);
    found.expired.push(...batch.expired);
    found.givenUp.push(...batch.givenUp);
    from = batch.next;
  } while (from !== undefined);
  return found;
}

/** The keys a pass leaves behind, one per shard; one gone means that shard's keys vanished since (see the top
 *  of this file). */
export const sweepMarkerKeys = (queue: QueueOrShards<WebhookJobData>): string[] =>
  asShards(queue).shards.map((shard) => shard.toKey('lost-job-sweep'));
