// The scheduler role: one BullMQ job scheduler fires a `tick` every few seconds; the tick's job asks Postgres
// which connections are due and enqueues syncs of their due bands, as far as the call budget goes
// (call-budget.ts). Postgres stays the one source of truth for who is
// due, so start-up needs no reconciliation and N scheduler processes are as good as one (the job scheduler
// is upserted idempotently and each tick job runs once).
import type { EventEmitter } from 'node:events';
import { Worker, type ConnectionOptions, type Queue } from 'bullmq';
import type { RepeatedErrorLog } from '../lib/repeated-errors.js';
import type { Logger } from '../log.js';
import type { ConnectionStore } from '../store/connections.js';
import type { DueConnectionRow, DuePageCursor } from '../store/due-connections.js';
import type { Metrics } from '../lib/metrics.js';
import { readBandState } from './band-schedule.js';
import type { CadenceBand } from '../config/sync-bands.js';
import { readPullCoverage } from '../store/pull-coverage.js';
import { allocateCalls, type Allocation, type CallBudget } from './call-budget.js';
import { ACCOUNT_CALLS, accountReadDue } from './pull-plan.js';
import {
  connectionsWithQueuedSync,
  enqueueBandSyncs,
  TICK_JOB,
  TICK_QUEUE,
  type SyncJobData,
} from './queues.js';
import { closeWorkersWithin } from '../lib/close-workers.js';
import { reportErrorsAndBackOff } from '../lib/worker-errors.js';
import type { QueueOrShards } from '../lib/queue-shards.js';

export const TICK_SCHEDULER_ID = 'due-connections';

/** Due connections one page of a tick reads (SchedulerDeps.batchSize's default). */
export const TICK_BATCH_SIZE = 5000;

export interface SchedulerDeps {
  connections: ConnectionStore;
  /** Sharded by connection (REDIS_SHARDS); the tick queue is one per installation, on REDIS_PREFIX's tag: its
   *  job scheduler makes sure one tick runs at a time, and the budget it spends is one for every worker. */
  syncQueue: QueueOrShards<SyncJobData>;
  tickQueue: Queue;
  /** The tick worker's connection (it blocks: BullMQ's blocking connection). */
  connection: ConnectionOptions;
  /** The tick queue's connection: the job scheduler is re-created each time it is ready again. */
  queueConnection: EventEmitter;
  prefix: string;
  tickSeconds: number;
  /** SHUTDOWN_GRACE_SECONDS: how long close() waits for the tick in flight before it stops waiting (close-workers.ts). */
  shutdownGraceMs: number;
  maxAttempts: number;
  /** SYNC_BANDS and SYNC_HORIZON_DAYS: which bands exist and how far ahead they reach. */
  bands: readonly CadenceBand[];
  horizonDays: number;
  /** SYNC_ACCOUNT_INTERVAL: a sync reads the profile and event types when this has passed (pull-plan.ts). */
  accountIntervalSeconds: number;
  /** The upstream calls the scheduler may spend (SYNC_CALL_BUDGET_PER_SECOND). */
  budget: CallBudget;
  /** Due connections one page of a tick reads (TICK_BATCH_SIZE); a tick reads as many pages as are due. */
  batchSize?: number;
  now: () => Date;
  logger: Logger;
  errors: RepeatedErrorLog;
  metrics?: Pick<Metrics, 'bandDeferred' | 'bandOverdueSeconds' | 'budgetCallsAllocated'>;
  /**
   * Runs `run` every `periodMs` until stopped: the watchdog's timer. Default setInterval. `run` resolves when
   * the watchdog's look is over (a test's clock waits for it).
   */
  every?: (periodMs: number, run: () => Promise<void>) => () => void;
}

export interface TickResult {
  /** Connections due at the tick. */
  due: number;
  /** Of those, connections whose sync job waits or runs already: not budgeted for, they keep that job. */
  queued: number;
  /** Sync jobs enqueued. */
  enqueued: number;
  /** The connections those jobs sync. */
  enqueuedIds: string[];
  /** Calls the enqueued jobs are expected to cost. */
  calls: number;
  deferred: Allocation['deferred'];
}

/** What one tick needs: the scheduler role's, and tests' that tick by hand on an injected clock. */
export type TickDeps = Pick<
  SchedulerDeps,
  | 'connections'
  | 'syncQueue'
  | 'maxAttempts'
  | 'bands'
  | 'horizonDays'
  | 'accountIntervalSeconds'
  | 'budget'
  | 'batchSize'
  | 'now'
  | 'logger'
  | 'metrics'
>;

/** What one page of due connections came to. */
interface PageResult {
  due: number;
  queued: number;
  enqueuedIds: string[];
  calls: number;
  /** The budget ran out on this page: what it left waits for the next tick, as do the pages after it. */
  budgetSpent: boolean;
  deferred: Allocation['deferred'];
}

/** One page of due connections: their due bands, the latest first, as far as the budget goes. */
async function enqueueDuePage(
  deps: TickDeps,
  rows: readonly DueConnectionRow[],
  now: Date,
  batchId: string,
): Promise<PageResult> {
  const queued = await connectionsWithQueuedSync(
    deps.syncQueue,
    rows.map((row) => row.id),
  );
  const due = rows.map((row) => ({
    id: row.id,
    bandState: readBandState(row.bandState),
    dueSince: row.nextSyncAt,
    queued: queued.has(row.id),
    accountCalls: accountReadDue(
      readPullCoverage(row.pullCoverage).eventTypesPulledAtMs,
      now.getTime(),
      deps.accountIntervalSeconds,
    )
      ? ACCOUNT_CALLS
      : 0,
  }));
  const available = await deps.budget.available(now);
  const allocation = allocateCalls(deps.bands, deps.horizonDays, due, available, deps.budget.capacity, now);
  const enqueued = await enqueueBandSyncs(
    deps.syncQueue,
    allocation.picks.map((pick) => ({ connectionId: pick.connectionId, bands: pick.bands })),
    deps.maxAttempts,
    batchId,
  );
  const enqueuedIds = new Set(enqueued.map((pick) => pick.connectionId));
  const calls = allocation.picks
    .filter((pick) => enqueuedIds.has(pick.connectionId))
    .reduce((sum, pick) => sum + pick.calls, 0);
  if (calls > 0) await deps.budget.spend(calls, now);
  return {
    due: due.length,
    queued: queued.size,
    enqueuedIds: [...enqueuedIds],
    calls,
    budgetSpent: allocation.waiting.length > 0,
    deferred: allocation.deferred,
  };
}

/**
 * One tick: the due connections' due bands, the latest first, as far as the call budget goes
 * (call-budget.ts); the rest wait for the next tick. Each pick becomes one sync job for the bands chosen.
 * The due connections are read a page (batchSize) at a time, earliest first, and the tick goes on to the next
 * page until none is left due or the budget is spent: one page a tick capped the whole installation at a
 * page per SYNC_TICK_SECONDS (5,000 per 30 s: some 40,000 connections at the default 4-minute near band), and
 * a page of connections whose jobs were queued already hid every connection behind it. Each page's cost is its
 * rows, never the rows kept (due-connections.ts).
 */
export async function enqueueDueSyncs(deps: TickDeps): Promise<TickResult> {
  const now = deps.now();
  const pageSize = deps.batchSize ?? TICK_BATCH_SIZE;
  const batchId = `tick-${now.getTime()}`;
  const total = { due: 0, queued: 0, enqueued: 0, calls: 0 };
  const enqueuedIds: string[] = [];
  let page: PageResult;
  let after: DuePageCursor | undefined;
  for (;;) {
    const rows = await deps.connections.findDue(now, pageSize, after);
    page = await enqueueDuePage(deps, rows, now, batchId);
    total.due += page.due;
    total.queued += page.queued;
    total.enqueued += page.enqueuedIds.length;
    enqueuedIds.push(...page.enqueuedIds);
    total.calls += page.calls;
    const last = rows.at(-1);
    if (page.budgetSpent || rows.length < pageSize || last === undefined) break;
    after = { id: last.id, nextSyncAt: last.nextSyncAt };
  }
  // What waits is the last page's: the budget stopped the tick there (or nothing waits).
  for (const [band, waiting] of Object.entries(page.deferred)) {
    deps.metrics?.bandDeferred.set({ band }, waiting.count);
    deps.metrics?.bandOverdueSeconds.set({ band }, waiting.oldestOverdueSeconds);
  }
  deps.metrics?.budgetCallsAllocated.inc(total.calls);
  if (total.enqueued > 0) deps.logger.info(total, 'enqueued due syncs');
  return { ...total, enqueuedIds, deferred: page.deferred };
}

function isReady(client: EventEmitter): boolean {
  return (client as { status?: unknown }).status === 'ready';
}

/** Resolves once `client` (an ioredis connection) is ready; at once when it is. */
function untilReady(client: EventEmitter): Promise<void> {
  if (isReady(client)) return Promise.resolve();
  return new Promise((resolve) => client.once('ready', () => resolve()));
}

export interface RunningScheduler {
  close(): Promise<void>;
}

/** States of a tick job that will run, or runs: the one that runs schedules its successor as it starts. */
const PENDING_TICK_STATES: ReadonlySet<string> = new Set(['waiting', 'prioritized', 'delayed', 'active']);

/**
 * Whether a next tick exists in Redis: the tick's job scheduler, and the job it fires next (BullMQ names it
 * `repeat:<scheduler id>:<next>`) waiting or running. The scheduler alone is not enough: with that job's keys
 * or its place in the delayed set gone, no tick fires. A running tick counts: BullMQ's worker creates its
 * successor (and moves `next` on) only once it has taken the tick, so for a moment the running tick is
 * `next`. The watchdog and readiness both ask this.
 */
export async function tickIsScheduled(tickQueue: Queue): Promise<boolean> {
  const scheduler = await tickQueue.getJobScheduler(TICK_SCHEDULER_ID);
  if (typeof scheduler?.next !== 'number') return false;
  const jobId = `repeat:${TICK_SCHEDULER_ID}:${scheduler.next}`;
  const [job, state] = await Promise.all([tickQueue.getJob(jobId), tickQueue.getJobState(jobId)]);
  if (job !== undefined && PENDING_TICK_STATES.has(state)) return true;
  // That tick may have run (and finished) between the reads: then its successor is `next` now, created in
  // the same step that moved `next`.
  return (await tickQueue.getJobScheduler(TICK_SCHEDULER_ID))?.next !== scheduler.next;
}

function everyInterval(periodMs: number, run: () => Promise<void>): () => void {
  const timer = setInterval(() => void run(), periodMs);
  return () => clearInterval(timer);
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
  // Keys can also vanish with no reconnect to tell: a FLUSHDB, an eviction under a wrong maxmemory-policy, a
  // failover to an empty replica; all of them, or only the next tick's job. So once a tick interval the
  // watchdog looks for a next tick, and when there is none upserts the job scheduler: BullMQ's upsert then
  // adds a next tick job (addJobScheduler.lua: a job for the scheduler's next time it cannot find waiting is
  // left alone, and one is added at the next free time). Only when there is none: that is what the warning
  // says, and on a sound scheduler the upsert would remove and re-add its waiting job for nothing.
  let looking: Promise<void> | undefined;
  const restoreTickIfMissing = async () => {
    try {
      // While Redis is away the reconnect puts the tick back (onReady): nothing to look at until then.
      if (!isReady(deps.queueConnection) || (await tickIsScheduled(deps.tickQueue))) return;
      await ensureTicking();
      deps.logger.warn(
        { schedulerId: TICK_SCHEDULER_ID },
        'the tick was missing from Redis (its keys deleted or evicted): put back, due syncs go on',
      );
    } catch (error: unknown) {
      deps.errors.report('tick watchdog', error);
    }
  };
  const stopWatching = (deps.every ?? everyInterval)(
    deps.tickSeconds * 1000,
    () => (looking ??= restoreTickIfMissing().finally(() => (looking = undefined))),
  );
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
      stopWatching();
      await looking;
      deps.queueConnection.off('ready', onReady);
      errorHandling.stop();
      await closeWorkersWithin([worker], deps.shutdownGraceMs, deps.logger);
    },
  };
}
