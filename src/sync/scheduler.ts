// The scheduler role: one BullMQ job scheduler fires a `tick` every few seconds; the tick's job asks Postgres
// which connections are due and enqueues their syncs. Postgres stays the one source of truth for who is
// due, so start-up needs no reconciliation and N scheduler processes are as good as one (the job scheduler
// is upserted idempotently and each tick job runs once).
import type { EventEmitter } from 'node:events';
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

// Duck-typed, not instanceof: ioredis may come from another module realm (a test runner's sandbox).
function isEventEmitter(value: unknown): value is EventEmitter {
  return typeof (value as { on?: unknown } | null)?.on === 'function';
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
  await ensureTicking();
  // The job scheduler lives in Redis. A Redis that restarts without persistence comes back empty, and the
  // daemon would then never tick again (silently: every worker reconnects fine). Upserting is idempotent,
  // so it is repeated each time the connection is ready again; due connections are in Postgres, so the
  // next tick re-enqueues whatever the lost queue held.
  // main.ts passes its shared ioredis instance; plain connection options have no client to watch.
  const client = isEventEmitter(deps.connection) ? deps.connection : undefined;
  const onReady = () => {
    ensureTicking().catch((error: unknown) =>
      deps.logger.error({ err: error }, 'could not re-create the tick scheduler after a reconnect'),
    );
  };
  client?.on('ready', onReady);
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
  return {
    close: async () => {
      client?.off('ready', onReady);
      await worker.close();
    },
  };
}
