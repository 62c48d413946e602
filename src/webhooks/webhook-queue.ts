// Webhook deliveries through BullMQ: the dispatcher hands the outbox's new rows to the `webhooks` queue, and the
// worker attempts each, retrying failures with exponential backoff (webhook-jobs.ts declares the policy).
// Delivery is at least once: a receiver drops repeats by webhook-id. Postgres, not Redis, says what is left to
// deliver: the lost-job sweep (lost-deliveries.ts) deals with the rows whose job the queue has lost.
// The queue is sharded by delivery id over REDIS_SHARDS hash tags (lib/queue-shards.ts): a worker process runs
// one BullMQ worker per shard.
import type { Queue } from 'bullmq';
import { Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Metrics } from '../lib/metrics.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { createObservedQueue, type QueueSettings } from '../lib/observed-queue.js';
import {
  asShards,
  groupByShard,
  openQueueShards,
  type QueueOrShards,
  type QueueShards,
} from '../lib/queue-shards.js';
import { closeWorkersWithin } from '../lib/close-workers.js';
import { shardConcurrency } from '../lib/shard-workers.js';
import type { RepeatedErrorLog } from '../lib/repeated-errors.js';
import type { Logger } from '../log.js';
import type { WebhookDeliveryStore } from '../store/webhook-deliveries.js';
import { reportErrorsAndBackOff } from '../lib/worker-errors.js';
import { sweepLostDeliveries, sweepMarkerKeys, type LostDeliveryDeps } from './lost-deliveries.js';
import { attemptDelivery, type WebhookDeliveryDeps } from './webhook-delivery.js';
import {
  WEBHOOK_JOB,
  WEBHOOK_QUEUE,
  webhookJobOptions,
  type WebhookJobData,
  type WebhookRetrySettings,
} from './webhook-jobs.js';

export { WEBHOOK_QUEUE, type WebhookJobData, type WebhookRetrySettings };

export function createWebhookQueue(settings: QueueSettings): Queue<WebhookJobData> {
  return createObservedQueue<WebhookJobData>(WEBHOOK_QUEUE, settings, 'webhook queue');
}

/** The webhook queue over `count` hash tags, sharded by delivery id. */
export function createWebhookQueueShards(
  settings: QueueSettings,
  count: number,
): QueueShards<WebhookJobData> {
  return openQueueShards(settings.prefix, count, (prefix) => createWebhookQueue({ ...settings, prefix }));
}

/** Hands every outbox row not handed over yet to the queue; the number handed over. */
export async function dispatchPending(
  deliveries: WebhookDeliveryStore,
  queue: QueueOrShards<WebhookJobData>,
  retry: WebhookRetrySettings,
  now: Date,
  batch = 500,
): Promise<number> {
  // The rows stay locked while their jobs are added: another dispatcher skips them.
  return deliveries.handOverNew(batch, now, async (ids) => {
    await Promise.all(
      groupByShard(asShards(queue), ids, (id) => id).map(({ shard, items }) =>
        shard.addBulk(
          items.map((id) => ({
            name: WEBHOOK_JOB,
            data: { deliveryId: id },
            opts: webhookJobOptions(id, retry),
          })),
        ),
      ),
    );
  });
}

export interface RunningWebhookWorker {
  /** Dispatch now (after a commit that wrote deliveries) rather than at the next interval. */
  kick(): void;
  close(): Promise<void>;
}

/**
 * The delivery worker, the dispatcher that feeds it, and the lost-job sweep. The dispatcher runs every
 * `dispatchIntervalMs` and whenever kicked; a failure (Postgres or Redis away) is logged and tried again at the
 * next interval. The sweep passes every `sweepIntervalSeconds` (on `every`, the worker's clock), when the
 * queue's connection is ready again, and when a dispatch interval finds the last pass's marker gone.
 */
export function startWebhookWorker(options: {
  queue: QueueOrShards<WebhookJobData>;
  /** The queue's own connection: its reconnects, and the sweep's reads of job keys. */
  queueConnection: RedisClient;
  connection: ConnectionOptions;
  /** The process's deliveries at once, shared out among the shards' workers (shard-workers.ts). */
  concurrency: number;
  /** How long a job is held without renewing: a killed worker's delivery moves to another after this. */
  lockSeconds: number;
  dispatchIntervalMs: number;
  sweepIntervalSeconds: number;
  /** Runs `run` every `periodMs` until stopped; absent: setInterval. */
  every?: (periodMs: number, run: () => Promise<void>) => () => void;
  retry: WebhookRetrySettings;
  /** How an attempt is made, and the delivery store the worker, the dispatcher and the sweep share. */
  delivery: WebhookDeliveryDeps;
  metrics: Metrics;
  /** SHUTDOWN_GRACE_SECONDS: how long close() waits for the jobs in flight before it stops waiting (close-workers.ts). */
  shutdownGraceMs: number;
  errors: RepeatedErrorLog;
  logger: Logger;
}): RunningWebhookWorker {
  const { logger } = options;
  const { deliveries } = options.delivery;
  const shards = asShards(options.queue);
  const deliver = async (job: Job<WebhookJobData>) => {
    const outcome = await attemptDelivery(options.delivery, job.data.deliveryId);
    if (outcome === 'already-done') return outcome;
    options.metrics.webhookAttempts.inc({ outcome });
    // One line per attempt that did not go through (the delivery row holds the details, the URL included).
    if (outcome !== 'delivered') {
      logger[outcome === 'disabled' ? 'warn' : 'info'](
        { deliveryId: job.data.deliveryId, attempt: job.attemptsMade + 1 },
        outcome === 'disabled'
          ? 'webhook delivery given up: its endpoint is disabled after failing for too long'
          : 'webhook delivery failed; retried with backoff',
      );
    }
    if (outcome === 'delivered') {
      const row = await deliveries.deliveryTimes(job.data.deliveryId);
      if (row?.deliveredAt) {
        options.metrics.webhookDeliverySeconds.observe(
          (row.deliveredAt.getTime() - row.createdAt.getTime()) / 1000,
        );
      }
    }
    // A failure is thrown so that the queue retries it; a disabled endpoint is not retried.
    if (outcome === 'failed') throw new Error('webhook delivery failed; retried with backoff');
    return outcome;
  };
  const workers = shards.shards.map((shard: Queue<WebhookJobData>) => {
    const worker = new Worker<WebhookJobData>(WEBHOOK_QUEUE, deliver, {
      connection: options.connection,
      prefix: shard.opts.prefix!,
      concurrency: shardConcurrency(options.concurrency, shards.shards.length),
      lockDuration: options.lockSeconds * 1000,
      stalledInterval: options.lockSeconds * 1000,
      // A delivery whose worker died twice in a row is more likely to kill workers than to be unlucky: the
      // queue fails it for good when a worker next takes it, and it is given up with that reason.
      maxStalledCount: 2,
    });
    worker.on('failed', (job, error) => {
      if (!job) return;
      // Retried unless its attempts are spent or the queue refused it (it stalled too often).
      const spent = job.attemptsMade >= (job.opts.attempts ?? 1);
      if (!spent && error.name !== 'UnrecoverableError') return;
      const reason = spent ? undefined : `the queue gave up: ${error.message}`;
      void deliveries
        .giveUp(job.data.deliveryId, options.delivery.now(), reason)
        .catch((failure: unknown) =>
          logger.warn(
            { err: failure, deliveryId: job.data.deliveryId },
            'could not mark a webhook delivery given up',
          ),
        );
    });
    const errorHandling = reportErrorsAndBackOff(worker, {
      source: 'webhook worker',
      errors: options.errors,
      logger,
    });
    return { worker, errorHandling };
  });

  const sweepDeps: LostDeliveryDeps = {
    deliveries,
    queue: options.queue,
    queueConnection: options.queueConnection,
    retry: options.retry,
  };
  const markerKeys = sweepMarkerKeys(options.queue);
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  // Set by the sweep's cadence, a reconnect, or a pass that failed. The marker is looked for at start and at
  // each dispatch interval (not on kicks): missing on a Redis no worker has swept yet, or one that lost its keys.
  let sweepWanted = false;
  let lookForMarker = true;
  const sweep = async () => {
    sweepWanted = false;
    try {
      // Left before the pass: keys that vanish during it take the marker along, and the next look sweeps again.
      const at = options.delivery.now().toISOString();
      await Promise.all(markerKeys.map((key) => options.queueConnection.set(key, at)));
      const found = await sweepLostDeliveries(sweepDeps, options.delivery.now());
      if (found.handedOver.length + found.expired.length + found.givenUp.length > 0) {
        logger.warn(
          {
            handedOver: found.handedOver.length,
            lostAfterRetryWindow: found.expired.length,
            givenUp: found.givenUp.length,
          },
          'webhook deliveries the queue had lost: handed over again, given up when lost after their retry ' +
            'window, or given up when their job had failed',
        );
      }
    } catch (error: unknown) {
      sweepWanted = true;
      throw error;
    }
  };
  const sweepIfWanted = async () => {
    if (lookForMarker) {
      lookForMarker = false;
      // One key per EXISTS: on a cluster the shards' markers are in different slots.
      const present = await Promise.all(markerKeys.map((key) => options.queueConnection.exists(key)));
      if (present.some((count) => count === 0)) sweepWanted = true;
    }
    if (sweepWanted) await sweep();
  };
  const dispatch = () => {
    if (closed) return running;
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          while (
            (await dispatchPending(deliveries, options.queue, options.retry, options.delivery.now())) > 0 &&
            !closed
          );
          if (!closed) await sweepIfWanted();
        } catch (error: unknown) {
          options.errors.report('webhook dispatcher', error);
        }
      } while (again && !closed);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  const sweepSoon = async () => {
    sweepWanted = true;
    await dispatch();
  };
  const timer = setInterval(() => {
    lookForMarker = true;
    void dispatch();
  }, options.dispatchIntervalMs);
  const every = options.every ?? everyInterval;
  const stopSweeping = every(options.sweepIntervalSeconds * 1000, sweepSoon);
  const onReady = () => void sweepSoon();
  options.queueConnection.on('ready', onReady);
  void dispatch();

  return {
    kick: () => void dispatch(),
    async close() {
      closed = true;
      clearInterval(timer);
      stopSweeping();
      options.queueConnection.off('ready', onReady);
      for (const { errorHandling } of workers) errorHandling.stop();
      await running;
      await closeWorkersWithin(
        workers.map(({ worker }) => worker),
        options.shutdownGraceMs,
        logger,
      );
    },
  };
}

function everyInterval(periodMs: number, run: () => Promise<void>): () => void {
  const timer = setInterval(() => void run(), periodMs);
  return () => clearInterval(timer);
}
