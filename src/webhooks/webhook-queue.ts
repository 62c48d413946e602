// Webhook deliveries through BullMQ: the dispatcher hands the outbox's new rows to the `webhooks` queue (job id =
// delivery id, so handing one over twice is harmless), and the worker attempts each, retrying failures with
// exponential backoff: WEBHOOK_MAX_ATTEMPTS attempts, the n-th after WEBHOOK_RETRY_BASE_MS × 2^(n-2), which with
// the defaults (15, 5 s) spreads them over about a day. Delivery is at least once: a receiver drops repeats by
// webhook-id.
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
    { connection: options.connection, prefix: options.prefix, concurrency: options.concurrency },
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
        } catch (error: unknown) {
          options.errors.report('webhook dispatcher', error);
        }
      } while (again && !closed);
    })().finally(() => {
      running = undefined;
    });
  };
  const timer = setInterval(dispatch, options.dispatchIntervalMs);
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
