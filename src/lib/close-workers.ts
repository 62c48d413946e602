// Closing BullMQ workers at shutdown within a bound. Worker.close() waits for the jobs in flight, then for its
// main loop, which can be parked for ever on a Redis Cluster after a failover: the blocking fetch's watchdog
// (BZPOPMIN to the lost master never answers) reconnects the worker's blocking connection, and the ioredis
// Cluster's connect() it awaits is left unsettled, its client in 'close' with no node and no retry (seen in
// BullMQ 6.7 with ioredis 6.0; nothing outside BullMQ can settle that promise). A daemon's SIGTERM waited for
// ever on it, and a test's teardown 16 minutes. So shutdown waits for a close within the grace period, and past
// it goes on without that worker: its jobs' locks lapse and another worker's stalled check hands them back;
// the process exits once shutdown is over (cli.ts), whatever BullMQ's timers still hold. The sync worker
// has its own bound (sync-worker.ts: the grace period, then its jobs aborted).
import type { Worker } from 'bullmq';
import { settlesWithin } from './redis-close.js';

export interface WorkerCloseLog {
  warn(obj: object, msg: string): void;
}

/** Closes `workers`, waiting at most `graceMs` for them; says so when shutdown goes on without them. */
export async function closeWorkersWithin(
  workers: readonly Worker[],
  graceMs: number,
  log: WorkerCloseLog,
): Promise<void> {
  const closing = Promise.all(workers.map((worker) => worker.close()));
  if (await settlesWithin(closing, graceMs)) return;
  log.warn(
    { queue: workers[0]?.name, workers: workers.length },
    'workers did not close within the grace period; shutting down without them',
  );
}
