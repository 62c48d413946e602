// The scheduler role: one BullMQ job scheduler fires a `tick` every few seconds; the tick's job asks Postgres
// which connections are due and enqueues their syncs. Postgres stays the one source of truth for who is
// due, so start-up needs no reconciliation and N scheduler processes are as good as one (the job scheduler
// is upserted idempotently and each tick job runs once).
import { Worker, type ConnectionOptions, type Queue } from 'bullmq';
import type { Logger } from '../log.js';
import type { ConnectionStore } from '../store/connections.js';
import { enqueueSyncs, TICK_JOB, TICK_QUEUE, type SyncJobData } from './queues.js';

export const TICK_SCHEDULER_ID = 'due-connections';

export interface SchedulerDeps {
  connections: ConnectionStore;
  syncQueue: Queue<SyncJobData>;
  tickQueue: Queue;
  connection: ConnectionOptions;
  prefix: string;
  tickSeconds: number;
  maxAttempts: number;
  /** Most connections one tick enqueues; the rest are due still and go next tick. */
  batchSize?: number;
  now: () => Date;
  logger: Logger;
}

/** One tick: enqueue a sync for every due connection. Returns how many were due. */
export async function enqueueDueSyncs(
  deps: Omit<SchedulerDeps, 'tickQueue' | 'connection' | 'prefix' | 'tickSeconds'>,
) {
  const due = await deps.connections.findDueIds(deps.now(), deps.batchSize ?? 5000);
  await enqueueSyncs(deps.syncQueue, due, deps.maxAttempts);
  if (due.length > 0) deps.logger.info({ due: due.length }, 'enqueued due syncs');
  return due.length;
}

export interface RunningScheduler {
  close(): Promise<void>;
}

export async function startScheduler(deps: SchedulerDeps): Promise<RunningScheduler> {
  await deps.tickQueue.upsertJobScheduler(
    TICK_SCHEDULER_ID,
    { every: deps.tickSeconds * 1000 },
    { name: TICK_JOB, opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } },
  );
  const worker = new Worker(TICK_QUEUE, async () => enqueueDueSyncs(deps), {
    connection: deps.connection,
    prefix: deps.prefix,
    concurrency: 1,
  });
  worker.on('failed', (_job, error) =>
    deps.logger.error({ err: error }, 'tick failed; the next tick tries again'),
  );
  await worker.waitUntilReady();
  deps.logger.info({ everySeconds: deps.tickSeconds }, 'scheduler started');
  return { close: () => worker.close() };
}
