// The worker role: runs sync jobs with bounded concurrency and turns each attempt's verdict into BullMQ's
// terms. Permanent failures throw UnrecoverableError so retries stop; a long upstream rate limit hands the
// job back to the queue (and pauses the queue) without spending an attempt; anything else backs off with the
// delay the attempt chose and recorded. A killed worker's job is picked up by another worker once its lock
// lapses (BullMQ's stalled-job check). With the sync queue sharded (REDIS_SHARDS) a worker process runs one
// BullMQ worker per shard, so every shard is consumed wherever workers run.
import {
  UnrecoverableError,
  WaitingError,
  Worker,
  type ConnectionOptions,
  type Job,
  type Queue,
} from 'bullmq';
import type { RepeatedErrorLog } from '../lib/repeated-errors.js';
import { asShards, type QueueOrShards, type QueueShards } from '../lib/queue-shards.js';
import { shardConcurrency } from '../lib/shard-workers.js';
import type { Logger } from '../log.js';
import { SYNC_BACKOFF, SYNC_QUEUE, syncJobDataSchema, type SyncJobData } from './queues.js';
import { syncConnection, SyncFailedError, SyncInterruptedError, type SyncDeps } from './sync-connection.js';
import { reportErrorsAndBackOff } from '../lib/worker-errors.js';

/** How long aborted jobs get to record their attempt and hand the job back before the process moves on. */
const ABORT_SETTLE_MS = 5000;

export interface SyncWorkerSettings {
  connection: ConnectionOptions;
  /** The process's syncs at once, shared out among the shards' workers (shard-workers.ts). */
  concurrency: number;
  lockSeconds: number;
  shutdownGraceSeconds: number;
  errors: RepeatedErrorLog;
}

export interface SyncJobResult {
  skipped?: string;
  slotsOpened?: number;
  slotsClosed?: number;
  feedVersionMoved?: boolean;
}

export interface RunningSyncWorker {
  /** One per shard of the sync queue. */
  workers: Worker<SyncJobData, SyncJobResult>[];
  /** Stops taking jobs, lets in-flight ones finish within the grace period, then hands the rest back. */
  close(): Promise<void>;
}

async function processSyncJob(
  deps: SyncDeps,
  syncQueue: QueueShards<SyncJobData>,
  job: Job<SyncJobData, SyncJobResult>,
  token: string | undefined,
  signal: AbortSignal | undefined,
): Promise<SyncJobResult> {
  const parsed = syncJobDataSchema.safeParse(job.data);
  if (!parsed.success)
    throw new UnrecoverableError(`malformed sync job data: ${parsed.error.issues[0]?.message}`);
  const { connectionId, bands } = parsed.data;

  const status = await deps.connections.statusOf(connectionId);
  // A connection deleted, disabled or waiting for re-authorisation since the job was enqueued.
  if (!status) return { skipped: 'connection deleted' };
  if (status !== 'active') return { skipped: `connection is ${status}` };

  try {
    const changes = await syncConnection(deps, {
      connectionId,
      jobId: job.id ?? null,
      attempt: job.attemptsMade + 1,
      maxAttempts: job.opts.attempts ?? 1,
      ...(bands ? { bands } : {}),
      ...(signal ? { signal } : {}),
    });
    return {
      slotsOpened: changes.slotsOpened,
      slotsClosed: changes.slotsClosed,
      feedVersionMoved: changes.feedVersionMoved,
    };
  } catch (error: unknown) {
    if (error instanceof SyncInterruptedError) {
      // Back to waiting without spending an attempt: a deploy must not use up a job's retries.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    if (!(error instanceof SyncFailedError)) throw error;
    if (error.verdict.permanent) throw new UnrecoverableError(error.message);
    if (error.verdict.rateLimitedMs !== undefined) {
      // The upstream's limit is one for the installation: every shard waits it out, not only this job's.
      await Promise.all(syncQueue.shards.map((shard) => shard.rateLimit(error.verdict.rateLimitedMs!)));
      throw Worker.RateLimitError();
    }
    throw error;
  }
}

export function startSyncWorker(
  deps: SyncDeps,
  syncQueue: QueueOrShards<SyncJobData>,
  settings: SyncWorkerSettings,
  logger: Logger,
): RunningSyncWorker {
  const shards = asShards(syncQueue);
  const workers = shards.shards.map((shard: Queue<SyncJobData>) =>
    startShardWorker(deps, shards, shard, settings, logger),
  );
  return closedTogether(workers, settings, logger);
}

function startShardWorker(
  deps: SyncDeps,
  shards: QueueShards<SyncJobData>,
  shard: Queue<SyncJobData>,
  settings: SyncWorkerSettings,
  logger: Logger,
): { worker: Worker<SyncJobData, SyncJobResult>; stopErrorHandling(): void } {
  const worker = new Worker<SyncJobData, SyncJobResult>(
    SYNC_QUEUE,
    (job, token, signal) => processSyncJob(deps, shards, job, token, signal),
    {
      connection: settings.connection,
      prefix: shard.opts.prefix!,
      concurrency: shardConcurrency(settings.concurrency, shards.shards.length),
      lockDuration: settings.lockSeconds * 1000,
      stalledInterval: settings.lockSeconds * 1000,
      // A job whose worker died twice in a row is more likely to kill workers than to be unlucky.
      maxStalledCount: 2,
      settings: {
        backoffStrategy: (attemptsMade, type, error) =>
          type === SYNC_BACKOFF && error instanceof SyncFailedError && error.retryDelayMs !== undefined
            ? error.retryDelayMs
            : Math.min(60_000, 1000 * 2 ** attemptsMade),
      },
    },
  );
  worker.on('failed', (job, error) => {
    if (job && (job.attemptsMade >= (job.opts.attempts ?? 1) || error instanceof UnrecoverableError)) {
      logger.error(
        { jobId: job.id, connectionId: job.data.connectionId, error: error.message },
        'sync failed for good',
      );
    }
  });
  const errorHandling = reportErrorsAndBackOff(worker, {
    source: 'sync worker',
    errors: settings.errors,
    logger,
  });
  return { worker, stopErrorHandling: () => errorHandling.stop() };
}

/** The shards' workers as one: closed together, within one grace period. */
function closedTogether(
  started: { worker: Worker<SyncJobData, SyncJobResult>; stopErrorHandling(): void }[],
  settings: SyncWorkerSettings,
  logger: Logger,
): RunningSyncWorker {
  const workers = started.map(({ worker }) => worker);
  let closing: Promise<void> | undefined;
  return {
    workers,
    close() {
      closing ??= (async () => {
        for (const { stopErrorHandling } of started) stopErrorHandling();
        const graceful = Promise.all(workers.map((worker) => worker.close()));
        const graceMs = settings.shutdownGraceSeconds * 1000;
        let timer: NodeJS.Timeout | undefined;
        const outOfTime = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), graceMs);
        });
        const result = await Promise.race([graceful.then(() => 'closed' as const), outOfTime]);
        clearTimeout(timer);
        if (result === 'timeout') {
          logger.warn(
            { graceSeconds: settings.shutdownGraceSeconds },
            'in-flight syncs outlived the grace period; handing them back',
          );
          // worker.close(true) cannot help here: BullMQ caches the first close() promise, the graceful one,
          // which waits for the jobs however long they take. Aborting them instead ends each attempt now (its
          // upstream calls and rate-limit waits take the signal); the attempt is recorded as interrupted and
          // the job goes back to waiting, unspent, so another worker completes it.
          for (const worker of workers) worker.cancelAllJobs('shutdown: the grace period is over');
          let settleTimer: NodeJS.Timeout | undefined;
          const settled = await Promise.race([
            graceful.then(() => true),
            new Promise<false>((resolve) => {
              settleTimer = setTimeout(() => resolve(false), ABORT_SETTLE_MS);
            }),
          ]);
          clearTimeout(settleTimer);
          // A job that ignores the abort is left active without a lock holder; another worker's stalled
          // check moves it back to waiting once its lock lapses.
          if (!settled)
            logger.warn('in-flight syncs did not stop when aborted; leaving them to the stalled check');
        }
      })();
      return closing;
    },
  };
}
