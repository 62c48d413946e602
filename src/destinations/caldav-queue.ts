// Pushes to CalDAV destinations through BullMQ: one job per destination in the `caldav` queue. Postgres, not
// Redis, says what is to push (store/caldav-destinations.ts: changes pending, a reconciliation due, a retry's
// time come), so a job carries the destination's id only and reads the feed when it runs: a job still waiting
// when the feed changes again pushes the newer content, and one waiting job per destination is enough. Its id is
// the destination's, so adding it again while it waits or runs adds nothing; it is removed when it ends, so the
// next change queues a new one. A push its worker parked at a busy host (below) has no job; that worker's
// dispatcher leaves it out, another's may queue it again. A per-destination Redis lock keeps two pushes of one
// destination from ever running at once (a stalled job handed to a second worker while the first still writes;
// a parked push and its job queued again by another worker).
//
// The dispatcher asks Postgres for due destinations every CALDAV_DISPATCH_INTERVAL_MS and when kicked (an
// on-demand push); a failed push is retried by the dispatcher once its backoff ends (push-policy.ts), never by
// BullMQ. The cleanups ended destinations leave (clean-up.ts) are jobs of the same queue under the same lock, so
// a cleanup never runs beside a push of the destination it ends.
//
// The queue is sharded by destination id over REDIS_SHARDS hash tags (lib/queue-shards.ts); a worker process
// runs one BullMQ worker per shard.
import type { Queue } from 'bullmq';
import { DelayedError, Worker, type ConnectionOptions, type Job, type JobsOptions } from 'bullmq';
import { CalDavHeldBackError } from '../caldav/errors.js';
import { LockTimeoutError, withRedisLock } from '../lib/redis-lock.js';
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
import { reportErrorsAndBackOff } from '../lib/worker-errors.js';
import type { Logger } from '../log.js';
import type { CaldavCleanupStore } from '../store/caldav-cleanups.js';
import type { CaldavDestinationStore, DuePush } from '../store/caldav-destinations.js';
import { cleanUpDestination, type CleanUpDeps, type CleanUpResult } from './clean-up.js';
import type { HostGate } from './host-gate.js';
import { createWorkerRoom, type WorkerRoom } from './worker-room.js';
import { isHostWait } from './host-limits.js';
import {
  HostWaitError,
  pushDestination,
  type PlaceTaken,
  type PushDeps,
  type PushResult,
} from './push-destination.js';

export const CALDAV_QUEUE = 'caldav';
export const CALDAV_JOB = 'push';
export const CALDAV_CLEANUP_JOB = 'cleanup';

export interface CaldavJobData {
  destinationId: string;
  /**
   * A push's calendar host when it was queued: a push whose host's line is full is sent back before it takes its
   * lock or reads anything. Absent (a cleanup, or a job queued by an older version), the host is known once the
   * push has read its destination.
   */
  host?: string;
}

/**
 * What a job ends with: its push's or cleanup's result, 'parked' in its worker's line at the host, or 'closing'
 * (its worker closed before it had room: still due, it is queued again).
 */
type CaldavJobResult = PushResult | CleanUpResult | 'parked' | 'closing';

/** How often a worker trims the logs of the destinations it pushed. */
const LOG_TRIM_INTERVAL_MS = 60_000;

/** Destinations handed to the queue per dispatcher pass, oldest change first. */
export const DISPATCH_BATCH = 500;

export function createCaldavQueue(settings: QueueSettings): Queue<CaldavJobData> {
  return createObservedQueue<CaldavJobData>(CALDAV_QUEUE, settings);
}

/** The CalDAV queue over `count` hash tags, sharded by destination id. */
export function createCaldavQueueShards(settings: QueueSettings, count: number): QueueShards<CaldavJobData> {
  return openQueueShards(settings.prefix, count, (prefix) => createCaldavQueue({ ...settings, prefix }));
}

/** BullMQ refuses ':' in custom ids. */
export const caldavJobId = (destinationId: string) => `caldav-${destinationId}`;
export const caldavCleanupJobId = (destinationId: string) => `caldav-cleanup-${destinationId}`;

export function caldavJobOptions(jobId: string): JobsOptions {
  return {
    jobId,
    // The push records its own failures and the dispatcher retries it: BullMQ never does.
    attempts: 1,
    removeOnComplete: true,
    removeOnFail: true,
  };
}

/** Queues one job of `name` per destination; one already waiting, delayed or running stays the only one. */
async function enqueueEach(
  queue: QueueOrShards<CaldavJobData>,
  name: typeof CALDAV_JOB | typeof CALDAV_CLEANUP_JOB,
  jobs: readonly CaldavJobData[],
): Promise<void> {
  if (jobs.length === 0) return;
  const jobIdOf = name === CALDAV_JOB ? caldavJobId : caldavCleanupJobId;
  await Promise.all(
    groupByShard(asShards(queue), jobs, (job) => job.destinationId).map(({ shard, items }) =>
      shard.addBulk(
        items.map((data) => ({ name, data, opts: caldavJobOptions(jobIdOf(data.destinationId)) })),
      ),
    ),
  );
}

/** Queues a push of each destination, naming its host (CaldavJobData). */
export const enqueuePushes = (queue: QueueOrShards<CaldavJobData>, pushes: readonly DuePush[]) =>
  enqueueEach(
    queue,
    CALDAV_JOB,
    pushes.map(({ id, host }) => ({ destinationId: id, host })),
  );

/** Queues the cleanup of each ended destination. */
export const enqueueCleanups = (queue: QueueOrShards<CaldavJobData>, destinationIds: readonly string[]) =>
  enqueueEach(
    queue,
    CALDAV_CLEANUP_JOB,
    destinationIds.map((destinationId) => ({ destinationId })),
  );

/** Hands every due destination and cleanup to the queue, but the pushes `waiting` says wait already; how many. */
export async function dispatchDuePushes(
  destinations: Pick<CaldavDestinationStore, 'due'>,
  queue: QueueOrShards<CaldavJobData>,
  reconcileIntervalMs: number,
  now: Date,
  cleanups?: Pick<CaldavCleanupStore, 'due'>,
  waiting: (destinationId: string) => boolean = () => false,
): Promise<number> {
  const due = await destinations.due(now, new Date(now.getTime() - reconcileIntervalMs), DISPATCH_BATCH);
  await enqueuePushes(
    queue,
    due.filter(({ id }) => !waiting(id)),
  );
  const ended = cleanups ? await cleanups.due(now, DISPATCH_BATCH) : [];
  await enqueueCleanups(queue, ended);
  return due.length + ended.length;
}

export interface RunningCaldavWorker {
  /** Dispatch now rather than at the next interval. */
  kick(): void;
  close(): Promise<void>;
}

export function startCaldavWorker(options: {
  queue: QueueOrShards<CaldavJobData>;
  connection: ConnectionOptions;
  /** For the per-destination locks. */
  redis: RedisClient;
  prefix: string;
  /** The process's pushes at once, shared out among the shards' workers (shard-workers.ts). */
  concurrency: number;
  lockSeconds: number;
  dispatchIntervalMs: number;
  push: PushDeps;
  cleanUp: CleanUpDeps;
  /** This process's lines at the hosts (host-gate.ts): a push sent back for a full line is parked there. */
  hostLines?: Pick<HostGate, 'park' | 'unpark' | 'isParked'>;
  /** SHUTDOWN_GRACE_SECONDS: how long close() waits for the jobs in flight before it stops waiting (close-workers.ts). */
  shutdownGraceMs: number;
  errors: RepeatedErrorLog;
  logger: Logger;
}): RunningCaldavWorker {
  const { push, logger } = options;
  const shards = asShards(options.queue);
  // On REDIS_PREFIX's tag, not the destination's shard: while processes with two values of REDIS_SHARDS run side by
  // side (a rolling change of it) both must take the same lock. Two commands a push, against a sync's hundred.
  const lockKey = (destinationId: string) => `${options.prefix}:caldav-push:${destinationId}`;
  // Logs are trimmed in batches: the destinations pushed since the last trim, once a minute.
  const logged = new Set<string>();
  let closed = false;
  /**
   * A place in the line of the host the job names, taken before the push's lock and first read: with no place, the
   * push is sent back having cost a BullMQ round only (a push sent back after reading its destination cost that
   * read and the lock's two Redis commands, about one push in two in the caldav-push bench).
   */
  const placeFor = (name: string, { host }: CaldavJobData): PlaceTaken | undefined => {
    if (name !== CALDAV_JOB || host === undefined || !push.hosts) return undefined;
    const place = push.hosts.takePlace(host);
    if (isHostWait(place)) throw new HostWaitError(host, place.retryInMs, place.reason);
    return { host, place };
  };
  /** A push or a cleanup under the destination's lock; a wait for its host is thrown (HostWaitError, held back). */
  const attempt = async (name: string, data: CaldavJobData): Promise<CaldavJobResult> => {
    const { destinationId } = data;
    let taken: PlaceTaken | undefined;
    try {
      taken = placeFor(name, data);
      // One lock for a destination's pushes and its cleanup: the cleanup starts once the push has stopped.
      return await withRedisLock(
        options.redis,
        lockKey(destinationId),
        { ttlMs: options.lockSeconds * 1000, waitMs: 0 },
        () =>
          name === CALDAV_CLEANUP_JOB
            ? cleanUpDestination(options.cleanUp, destinationId)
            : pushDestination(push, destinationId, taken),
      );
    } catch (error: unknown) {
      // Another worker is pushing it: what is still pending afterwards is dispatched again.
      if (error instanceof LockTimeoutError) return 'skipped';
      throw error;
    } finally {
      // Not pushed (its lock taken elsewhere, say) or pushed: the place is free again.
      taken?.place.leave();
    }
  };

  /**
   * A push whose host's line is full, parked there: run by this worker when a place in the line is given up, with
   * no BullMQ round (its job ended as 'parked'; sending it back to the delayed set and promoting it cost four
   * Redis commands and a fetch), within the worker's share of pushes at once (worker-room.ts).
   */
  const park = (room: WorkerRoom, host: string, key: string, data: CaldavJobData) =>
    options.hostLines!.park(host, key, async () => {
      if (closed) return false;
      room.resume(key, () => runParked(room, host, key, data));
      return true;
    });
  const runParked = async (room: WorkerRoom, host: string, key: string, data: CaldavJobData) => {
    try {
      await attempt(CALDAV_JOB, { ...data, host });
      logged.add(data.destinationId);
    } catch (error: unknown) {
      if (error instanceof HostWaitError && error.reason === 'busy') return park(room, error.host, key, data);
      // Held back: dropped here, still due. The dispatcher queues it again, and its job waits out the hold in the
      // delayed set.
      if (error instanceof HostWaitError || error instanceof CalDavHeldBackError) return;
      logger.warn(
        { err: error, destinationId: data.destinationId },
        'CalDAV push failed; the dispatcher queues it again while it is due',
      );
    }
  };

  const run = async (
    job: Job<CaldavJobData, CaldavJobResult>,
    token: string | undefined,
    room: WorkerRoom,
  ) => {
    try {
      return await attempt(job.name, job.data);
    } catch (error: unknown) {
      // Its host's line is full: the job ends, and the push waits parked in this process's line (park above).
      if (
        error instanceof HostWaitError &&
        error.reason === 'busy' &&
        job.name === CALDAV_JOB &&
        job.id !== undefined &&
        options.hostLines
      ) {
        park(room, error.host, job.id, job.data);
        return 'parked';
      }
      // Its host is busy or held back (a push's or a cleanup's): the job waits in the delayed set, not in this
      // worker's slot, so the slot goes to a push to another host meanwhile; the job's id keeps the dispatcher
      // from adding another.
      if ((error instanceof HostWaitError || error instanceof CalDavHeldBackError) && token !== undefined) {
        await job.moveToDelayed(Date.now() + error.retryInMs, token);
        throw new DelayedError();
      }
      throw error;
    }
  };
  const share = shardConcurrency(options.concurrency, shards.shards.length);
  const rooms: WorkerRoom[] = [];
  const workers = shards.shards.map((shard: Queue<CaldavJobData>) => {
    const room = createWorkerRoom(share);
    rooms.push(room);
    return new Worker<CaldavJobData, CaldavJobResult>(
      CALDAV_QUEUE,
      (job, token) => {
        // Its push parked here, or brought back and waiting for room, is this job now (before it waits for room
        // itself, so that the two do not both push).
        if (job.id !== undefined) {
          options.hostLines?.unpark(job.id);
          room.forget(job.id);
        }
        return room.job(() => run(job, token, room));
      },
      {
        connection: options.connection,
        prefix: shard.opts.prefix!,
        concurrency: share,
        lockDuration: options.lockSeconds * 1000,
        stalledInterval: options.lockSeconds * 1000,
      },
    );
  });
  for (const worker of workers) worker.on('completed', (job) => logged.add(job.data.destinationId));
  const trimLogs = async () => {
    const ids = [...logged];
    logged.clear();
    await push.destinations
      .trimLogs(ids)
      .catch((error: unknown) => options.errors.report('caldav log trim', error));
  };
  const trimTimer = setInterval(() => void trimLogs(), LOG_TRIM_INTERVAL_MS);
  const errorHandlings = workers.map((worker) => {
    worker.on('failed', (job, error) => {
      logger.warn(
        { err: error, destinationId: job?.data.destinationId },
        'CalDAV push job failed; the dispatcher queues it again while it is due',
      );
    });
    return reportErrorsAndBackOff(worker, { source: 'caldav worker', errors: options.errors, logger });
  });

  let running: Promise<void> | undefined;
  let again = false;
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
          await dispatchDuePushes(
            push.destinations,
            options.queue,
            push.reconcileIntervalMs,
            push.now(),
            options.cleanUp.cleanups,
            // Parked here, or brought back and waiting for room or running: a job now would only be parked again,
            // or skipped by the lock.
            (destinationId) => {
              const key = caldavJobId(destinationId);
              return (options.hostLines?.isParked(key) ?? false) || rooms.some((room) => room.holds(key));
            },
          );
        } catch (error: unknown) {
          options.errors.report('caldav dispatcher', error);
        }
      } while (again && !closed);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => void dispatch(), options.dispatchIntervalMs);
  void dispatch();

  return {
    kick: () => void dispatch(),
    async close() {
      closed = true;
      clearInterval(timer);
      clearInterval(trimTimer);
      for (const errorHandling of errorHandlings) errorHandling.stop();
      await running;
      // Rooms first, so that no parked push starts and the jobs waiting for room end now; then the jobs and the
      // parked pushes running, within one grace period.
      const roomsClosed = Promise.all(rooms.map((room) => room.close(options.shutdownGraceMs)));
      await closeWorkersWithin(workers, options.shutdownGraceMs, logger);
      await roomsClosed;
    },
  };
}
