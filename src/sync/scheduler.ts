// The scheduler role: one BullMQ job scheduler fires a `tick` every few seconds; the tick's job asks Postgres
// which connections are due and enqueues their syncs. Postgres stays the one source of truth for who is
// due, so start-up needs no reconciliation and N scheduler processes are as good as one (the job scheduler
// is upserted idempotently and each tick job runs once).
import type { EventEmitter } from 'node:events';
import { Worker, type ConnectionOptions, type Queue } from 'bullmq';
import type { RepeatedErrorLog } from '../lib/repeated-errors.js';
import type { Logger } from '../log.js';
import type { ConnectionStore } from '../store/connections.js';
import { enqueueSyncs, TICK_JOB, TICK_QUEUE, type SyncJobData } from './queues.js';
import { reportErrorsAndBackOff } from './worker-errors.js';

export const TICK_SCHEDULER_ID = 'due-connections';

export interface SchedulerDeps {
  connections: ConnectionStore;
  syncQueue: Queue<SyncJobData>;
  tickQueue: Queue;
  /** The tick worker's connection (it blocks: BullMQ's blocking connection). */
  connection: ConnectionOptions;
  /** The tick queue's connection: the job scheduler is re-created each time it is ready again. */
  queueConnection: EventEmitter;
  prefix: string;
  tickSeconds: number;
  maxAttempts: number;
  /** Most connections one tick enqueues; the rest are due still and go next tick. */
  batchSize?: number;
  now: () => Date;
  logger: Logger;
  errors: RepeatedErrorLog;
}

/** One tick: enqueue a sync for every due connection. Returns how many were due. */
export async function enqueueDueSyncs(
  deps: Pick<SchedulerDeps, 'connections' | 'syncQueue' | 'maxAttempts' | 'batchSize' | 'now' | 'logger'>,
) {
  const due = await deps.connections.findDueIds(deps.now(), deps.batchSize ?? 5000);
  await enqueueSyncs(deps.syncQueue, due, deps.maxAttempts);
  if (due.length > 0) deps.logger.info({ due: due.length }, 'enqueued due syncs');
  return due.length;
}

/** Resolves once `client` (an ioredis connection) is ready; at once when it is. */
function untilReady(client: EventEmitter): Promise<void> {
  if ((client as { status?: unknown }).status === 'ready') return Promise.resolve();
  return new Promise((resolve) => client.once('ready', () => resolve()));
}

export interface RunningScheduler {
  close(): Promise<void>;
}

export async function startScheduler(deps: SchedulerDeps): Promise<RunningScheduler> {
  const ensureTicking = () =>
    deps.tickQueue.upsertJobScheduler(
      TICK_SCHEDULER_ID,
      { every: deps.tickSeconds * 1000 },
      { name: TICK_JOB, opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } },
    );
  // The queue's connection fails fast: at start-up, wait for it rather than fail on a Redis still starting.
  await untilReady(deps.queueConnection);
  await ensureTicking();
  // The job scheduler lives in Redis. A Redis that restarts without persistence comes back empty, and the
  // daemon would then never tick again (silently: every worker reconnects fine). Upserting is idempotent,
  // so it is repeated each time the connection is ready again; due connections are in Postgres, so the
  // next tick re-enqueues whatever the lost queue held.
  const onReady = () => {
    ensureTicking().catch((error: unknown) =>
      deps.errors.report('tick scheduler upsert after a reconnect', error),
    );
  };
  deps.queueConnection.on('ready', onReady);
  const worker = new Worker(TICK_QUEUE, async () => enqueueDueSyncs(deps), {
    connection: deps.connection,
    prefix: deps.prefix,
    concurrency: 1,
  });
  const errorHandling = reportErrorsAndBackOff(worker, {
    source: 'tick worker',
    errors: deps.errors,
    logger: deps.logger,
    // Each tick job schedules the next as it starts; while Redis refused writes that failed, so nothing
    // would ever tick again: the job scheduler is upserted anew once Redis takes writes.
    onRecovered: () =>
      void ensureTicking().catch((error: unknown) =>
        deps.errors.report('tick scheduler upsert after Redis refused writes', error),
      ),
  });
  // A failed tick (Postgres down, say) is retried by the next one; every tick failing alike is one line a minute.
  worker.on('failed', (_job, error) => deps.errors.report('tick', error));
  worker.on('completed', () => deps.errors.recovered('tick'));
  await worker.waitUntilReady();
  deps.logger.info({ everySeconds: deps.tickSeconds }, 'scheduler started');
  return {
    close: async () => {
      deps.queueConnection.off('ready', onReady);
      errorHandling.stop();
      await worker.close();
    },
  };
}
