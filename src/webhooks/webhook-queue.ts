// Webhook deliveries through BullMQ: the dispatcher hands the outbox's new rows to the `webhooks` queue (job id =
// delivery id, so handing one over twice is harmless), and the worker attempts each, retrying failures with
// exponential backoff: WEBHOOK_MAX_ATTEMPTS attempts, the n-th after WEBHOOK_RETRY_BASE_MS × 2^(n-2), which with
// the defaults (15, 5 s) spreads them over about a day. Delivery is at least once: a receiver drops repeats by
// webhook-id. Postgres, not Redis, says what is left to deliver: a sweep hands over again the rows whose job the
// queue has lost (Redis restarted empty or its keys deleted) and gives up those whose job failed for good
// without the row being marked (a worker that died before its failure handler ran).
import { Queue, Worker, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Metrics } from '../lib/metrics.js';
import type { RepeatedErrorLog } from '../lib/repeated-errors.js';
import type { Logger } from '../log.js';
import { reportErrorsAndBackOff } from '../sync/worker-errors.js';
import { attemptDelivery, giveUp, type WebhookDeliveryDeps } from './webhook-delivery.js';

export const WEBHOOK_QUEUE = 'webhooks';
const WEBHOOK_JOB = 'deliver';

export interface WebhookJobData {
  deliveryId: string;
}

export interface WebhookRetrySettings {
  maxAttempts: number;
  retryBaseMs: number;
}

export function createWebhookQueue(settings: {
  connection: ConnectionOptions;
  prefix: string;
  errors: RepeatedErrorLog;
}): Queue<WebhookJobData> {
  const queue = new Queue<WebhookJobData>(WEBHOOK_QUEUE, {
    connection: settings.connection,
    prefix: settings.prefix,
  });
  queue.on('error', (error) => settings.errors.report('webhook queue', error));
  return queue;
}

export function webhookJobOptions(deliveryId: string, retry: WebhookRetrySettings): JobsOptions {
  return {
    jobId: deliveryId,
    attempts: retry.maxAttempts,
    backoff: { type: 'exponential', delay: retry.retryBaseMs },
    removeOnComplete: { age: 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
  };
}

/** Hands every outbox row not handed over yet to the queue; the number handed over. */
export async function dispatchPending(
  prisma: PrismaClient,
  queue: Queue<WebhookJobData>,
  retry: WebhookRetrySettings,
  now: Date,
  batch = 500,
): Promise<number> {
  return prisma.$transaction(async (tx) => {
    // Several workers may dispatch at once: each takes rows no other holds.
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM webhook_delivery
      WHERE enqueued_at IS NULL AND delivered_at IS NULL AND given_up_at IS NULL
      ORDER BY created_at LIMIT ${batch}
      FOR UPDATE SKIP LOCKED`;
    if (rows.length === 0) return 0;
    await queue.addBulk(
      rows.map(({ id }) => ({
        name: WEBHOOK_JOB,
        data: { deliveryId: id },
        opts: webhookJobOptions(id, retry),
      })),
    );
    await tx.webhookDelivery.updateMany({
      where: { id: { in: rows.map((r) => r.id) } },
      data: { enqueuedAt: now },
    });
    return rows.length;
  });
}

/** Where the lost-job sweep has got to: it walks the pending rows in (created_at, id) order, a batch a time. */
export interface SweepCursor {
  createdAt: Date;
  id: string;
}

export interface LostDeliveries {
  /** Rows whose job the queue no longer had: handed over again. */
  handedOver: string[];
  /** Rows whose job had failed for good with the row still pending: given up. */
  givenUp: string[];
  /** Where the next batch starts; undefined when this one reached the end (the next pass starts over). */
  next: SweepCursor | undefined;
}

const SWEEP_START: SweepCursor = { createdAt: new Date(0), id: '00000000-0000-0000-0000-000000000000' };

/**
 * One batch of the lost-job sweep over rows handed over but neither delivered nor given up. The row is what
 * counts: every outcome of an attempt is written on it before its job completes, and a job exists before its
 * row says it was handed over. So a row still pending once its job is seen gone was lost with Redis; one whose
 * job is in the failed set has run out of attempts (or stalled too often) and only its marking was lost, or is
 * under way in the worker's failure handler (giving up twice is harmless); a completed job's row is finished
 * already, unless edited by hand. The row is read again after its job (a job can complete, and be removed,
 * between the two reads). No grace period is needed for the same reasons.
 */
export async function handOverLostDeliveries(
  prisma: PrismaClient,
  queue: Queue<WebhookJobData>,
  retry: WebhookRetrySettings,
  now: Date,
  after: SweepCursor | undefined,
  batch = 200,
): Promise<LostDeliveries> {
  const from = after ?? SWEEP_START;
  const rows = await prisma.$queryRaw<{ id: string; created_at: Date }[]>`
    SELECT id::text, created_at FROM webhook_delivery
    WHERE delivered_at IS NULL AND given_up_at IS NULL AND enqueued_at IS NOT NULL
      AND (created_at, id) > (${from.createdAt}, ${from.id}::uuid)
    ORDER BY created_at, id LIMIT ${batch}`;
  const last = rows.at(-1);
  const next = rows.length === batch && last ? { createdAt: last.created_at, id: last.id } : undefined;
  const states = await Promise.all(rows.map((row) => queue.getJobState(row.id)));
  const suspects = rows.filter((_, i) => states[i] === 'unknown' || states[i] === 'failed').map((r) => r.id);
  if (suspects.length === 0) return { handedOver: [], givenUp: [], next };
  const pending = new Set(
    (
      await prisma.webhookDelivery.findMany({
        where: { id: { in: suspects }, deliveredAt: null, givenUpAt: null },
        select: { id: true },
      })
    ).map((row) => row.id),
  );
  const lost = rows.filter((row, i) => states[i] === 'unknown' && pending.has(row.id)).map((r) => r.id);
  const failed = rows.filter((row, i) => states[i] === 'failed' && pending.has(row.id)).map((r) => r.id);
  if (lost.length > 0) {
    await queue.addBulk(
      lost.map((id) => ({ name: WEBHOOK_JOB, data: { deliveryId: id }, opts: webhookJobOptions(id, retry) })),
    );
    await prisma.webhookDelivery.updateMany({
      where: { id: { in: lost }, deliveredAt: null, givenUpAt: null },
      data: { enqueuedAt: now },
    });
  }
  for (const id of failed) {
    const job = await queue.getJob(id);
    // Attempts spent: the last attempt's error is the reason. Otherwise the queue's (a job that stalled too often).
    const attemptsLeft = job !== undefined && job.attemptsMade < (job.opts.attempts ?? 1);
    await giveUp(prisma, id, now, attemptsLeft ? `the queue gave up: ${job.failedReason}` : undefined);
  }
  return { handedOver: lost, givenUp: failed, next };
}

export interface RunningWebhookWorker {
  /** Dispatch now (after a commit that wrote deliveries) rather than at the next interval. */
  kick(): void;
  close(): Promise<void>;
}

/**
 * The delivery worker and the dispatcher that feeds it. The dispatcher runs every `dispatchIntervalMs` and
 * whenever kicked; a failure (Postgres or Redis away) is logged and tried again at the next interval.
 */
export function startWebhookWorker(options: {
  prisma: PrismaClient;
  queue: Queue<WebhookJobData>;
  connection: ConnectionOptions;
  prefix: string;
  concurrency: number;
  /** How long a job is held without renewing: a killed worker's delivery moves to another after this. */
  lockSeconds: number;
  dispatchIntervalMs: number;
  retry: WebhookRetrySettings;
  delivery: WebhookDeliveryDeps;
  metrics: Metrics;
  errors: RepeatedErrorLog;
  logger: Logger;
}): RunningWebhookWorker {
  const { prisma, logger } = options;
  const worker = new Worker<WebhookJobData>(
    WEBHOOK_QUEUE,
    async (job) => {
      const outcome = await attemptDelivery(options.delivery, job.data.deliveryId);
      if (outcome === 'already-done') return outcome;
      options.metrics.webhookAttempts.inc({ outcome });
      // One line per attempt that did not go through (the delivery row holds the details, the URL included).
      if (outcome !== 'delivered') {
        logger[outcome === 'disabled' ? 'warn' : 'info'](
          { deliveryId: job.data.deliveryId, attempt: job.attemptsMade + 1 },
          outcome === 'disabled'
            ? 'webhook endpoint disabled after failing for too long'
            : 'webhook delivery failed; retried with backoff',
        );
      }
      if (outcome === 'delivered') {
        const row = await prisma.webhookDelivery.findUnique({
          where: { id: job.data.deliveryId },
          select: { createdAt: true, deliveredAt: true },
        });
        if (row?.deliveredAt) {
          options.metrics.webhookDeliverySeconds.observe(
            (row.deliveredAt.getTime() - row.createdAt.getTime()) / 1000,
          );
        }
      }
      // A failure is thrown so that the queue retries it; a disabled endpoint is not retried.
      if (outcome === 'failed') throw new Error('webhook delivery failed; retried with backoff');
      return outcome;
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockSeconds * 1000,
      stalledInterval: options.lockSeconds * 1000,
      // A delivery whose worker died twice in a row is more likely to kill workers than to be unlucky: given up,
      // with that reason, by the sweep.
      maxStalledCount: 2,
    },
  );
  worker.on('failed', (job) => {
    if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
      void giveUp(prisma, job.data.deliveryId, options.delivery.now()).catch((error: unknown) =>
        logger.warn(
          { err: error, deliveryId: job.data.deliveryId },
          'could not mark a webhook delivery given up',
        ),
      );
    }
  });
  const errorHandling = reportErrorsAndBackOff(worker, {
    source: 'webhook worker',
    errors: options.errors,
    logger,
  });

  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  // The sweep runs a batch at each interval (not on kicks): a pass over many pending rows spreads out.
  let sweepDue = false;
  let sweepFrom: SweepCursor | undefined;
  const sweep = async () => {
    sweepDue = false;
    const found = await handOverLostDeliveries(
      prisma,
      options.queue,
      options.retry,
      options.delivery.now(),
      sweepFrom,
    );
    sweepFrom = found.next;
    if (found.handedOver.length + found.givenUp.length > 0) {
      logger.warn(
        { handedOver: found.handedOver.length, givenUp: found.givenUp.length },
        'webhook deliveries the queue had lost: handed over again, or given up when their job had failed',
      );
    }
  };
  const dispatch = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          while (
            (await dispatchPending(prisma, options.queue, options.retry, options.delivery.now())) > 0 &&
            !closed
          );
          if (sweepDue && !closed) await sweep();
        } catch (error: unknown) {
          options.errors.report('webhook dispatcher', error);
        }
      } while (again && !closed);
    })().finally(() => {
      running = undefined;
    });
  };
  const timer = setInterval(() => {
    sweepDue = true;
    dispatch();
  }, options.dispatchIntervalMs);
  dispatch();

  return {
    kick: dispatch,
    async close() {
      closed = true;
      clearInterval(timer);
      errorHandling.stop();
      await running;
      await worker.close();
    },
  };
}
