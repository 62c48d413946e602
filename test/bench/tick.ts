// Benchmark: the scheduler's tick at a million connections (issue 42). Connection rows are generated in bulk
// (`INSERT … SELECT generate_series`) into a private database, with what a tick reads as a synced connection
// has it: sealed tokens, band state for every default band, pull coverage. Their next_sync_at are spread over
// the nearest band's interval ahead (every connection's near band is due that often), so which and how many are
// due is set by the instant the tick runs at: the k-th earliest next_sync_at makes exactly k due. Whole ticks
// (enqueueDueSyncs: the query, the queued-job check, the budget, the enqueue) run against a redis-server of the
// bench's own, emptied between ticks so each tick enqueues its due connections anew; the shared Redis is
// never filled. Measured at 10,000, 100,000 and 1,000,000 rows kept with the same number due, and at
// 1,000,000 with more due. The query's plan (EXPLAIN ANALYZE) is read at each size.
import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import { variables } from '../../src/config.js';
import { bandsWithin, cadenceBandsSchema } from '../../src/config/sync-bands.js';
import { findExecutable, startRedisServer } from '../../src/demo/redis-server-process.js';
import { createRedisConnection, type RedisClient } from '../../src/lib/redis-connection.js';
import { createRepeatedErrorLog } from '../../src/lib/repeated-errors.js';
import { createLogger } from '../../src/log.js';
import { createConnectionStore } from '../../src/store/connections.js';
import { createTokenVault, vaultKeyFromBase64 } from '../../src/store/token-vault.js';
import { createRedisCallBudget } from '../../src/sync/call-budget.js';
import { createSyncQueue, type SyncJobData } from '../../src/sync/queues.js';
import { enqueueDueSyncs, TICK_BATCH_SIZE, type TickDeps } from '../../src/sync/scheduler.js';
import {
  explainDueQuery,
  insertBulkConnections,
  instantWithDue,
  type DueQueryPlan,
} from '../support/bulk-connections.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { check, type BenchSection } from './bench-result.js';
import { cpuMsOf, loadAverage, round } from './process-stats.js';

export interface TickBenchOptions {
  /** Rows kept at each step, ascending; the last is the million. */
  sizes: number[];
  /** Connections due at every size. */
  due: number;
  /** Connections due at the largest size, each measured too. */
  dueAtLargest: number[];
  /** Rows synced (moved on) before the query is read with their dead index entries. */
  deadEntries: number;
  /** Whole ticks timed per point; the median is reported. */
  ticks: number;
}

/** The instant the rows are generated around; ticks run a little after it. */
const BASE_MS = Date.parse('2026-03-02T09:00:00Z');
const TARGET_MS = 1000;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

const planName = (plan: DueQueryPlan) =>
  `${plan.scan.nodeType}${plan.scan.indexName ? ` on ${plan.scan.indexName}` : ''}`;

interface Point {
  kept: number;
  /** The due count asked for, and the count due at that instant (rows sharing it make it a few more). */
  wanted: number;
  due: number;
  tickMs: number;
  /** CPU a tick spent in this process (Node: Prisma, BullMQ, the allocation) and in the bench's redis-server. */
  nodeCpuMs: number;
  redisCpuMs: number;
  queryMs: number;
  enqueued: number;
  plan: DueQueryPlan;
}

async function measurePoint(
  db: TestDatabase,
  redis: RedisClient,
  redisPid: number,
  deps: Omit<TickDeps, 'now'>,
  kept: number,
  wanted: number,
  ticks: number,
): Promise<Point> {
  const at = await instantWithDue(db.sql, wanted);
  // Rows that share the k-th instant are due with it: the count is what the tick must enqueue.
  const { rows } = await db.sql.query<{ due: number }>(
    `SELECT count(*)::int AS due FROM connection WHERE next_sync_at <= $1`,
    [at],
  );
  const due = rows[0]!.due;
  const tickDeps: TickDeps = { ...deps, now: () => at };
  const tickMs: number[] = [];
  const nodeCpuMs: number[] = [];
  const redisCpuMs: number[] = [];
  const queryMs: number[] = [];
  let enqueued = 0;
  // One untimed tick first: the plan cached, the pages of the due rows read once, as a running scheduler has them.
  for (let i = 0; i <= ticks; i += 1) {
    await redis.flushdb();
    const queryStarted = performance.now();
    await deps.connections.findDue(at, deps.batchSize ?? TICK_BATCH_SIZE);
    const queried = performance.now() - queryStarted;
    await redis.flushdb();
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const redisCpuBefore = cpuMsOf(redisPid);
    const result = await enqueueDueSyncs(tickDeps);
    const elapsed = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const redisCpu = cpuMsOf(redisPid) - redisCpuBefore;
    if (i === 0) continue;
    tickMs.push(elapsed);
    nodeCpuMs.push((cpu.user + cpu.system) / 1000);
    redisCpuMs.push(redisCpu);
    queryMs.push(queried);
    enqueued = result.enqueued;
  }
  const plan = await explainDueQuery(db.sql, at, deps.batchSize ?? TICK_BATCH_SIZE);
  const point = {
    kept,
    wanted,
    due,
    tickMs: median(tickMs),
    nodeCpuMs: median(nodeCpuMs),
    redisCpuMs: median(redisCpuMs),
    queryMs: median(queryMs),
    enqueued,
    plan,
  };
  console.log(
    `tick: ${kept} kept, ${due} due: tick ${round(point.tickMs, 1)} ms (query ${round(point.queryMs, 1)} ms; ` +
      `CPU ${round(point.nodeCpuMs)} ms Node, ${round(point.redisCpuMs)} ms Redis), ` +
      `${enqueued} enqueued; plan ${planName(plan)}, ${plan.rowsRead} rows, ${plan.blocks} blocks, ` +
      `load ${loadAverage()}`,
  );
  return point;
}

/**
 * Syncs leave their old index entry behind until a VACUUM: each moves its row's next_sync_at on, so its old
 * entry, now dead, sits among the due ones the tick's query walks. `synced` of the earliest rows are moved on
 * (as their commits would), then the query is explained twice (the first visit marks dead entries for the
 * next) and once more after a VACUUM, with `due` due.
 */
async function measureDeadEntries(db: TestDatabase, synced: number, due: number, spreadMs: number) {
  const syncedUpTo = await instantWithDue(db.sql, synced);
  const started = performance.now();
  await db.sql.query(
    `UPDATE connection SET next_sync_at = next_sync_at + make_interval(secs => $2::int / 1000.0)
     WHERE next_sync_at <= $1`,
    [syncedUpTo, spreadMs],
  );
  const updateMs = performance.now() - started;
  const at = await instantWithDue(db.sql, due);
  const limit = TICK_BATCH_SIZE;
  const first = await explainDueQuery(db.sql, at, limit);
  const again = await explainDueQuery(db.sql, at, limit);
  await db.sql.query('VACUUM connection');
  const vacuumed = await explainDueQuery(db.sql, at, limit);
  console.log(
    `tick: ${synced} synced since the last VACUUM (updated in ${round(updateMs / 1000, 1)} s), ${due} due: ` +
      `query ${round(first.executionMs, 1)} ms / ${first.blocks} blocks, again ${round(again.executionMs, 1)} ms / ` +
      `${again.blocks} blocks, after VACUUM ${round(vacuumed.executionMs, 1)} ms / ${vacuumed.blocks} blocks`,
  );
  return { synced, first, again, vacuumed };
}

export async function benchTick(options: TickBenchOptions): Promise<BenchSection[]> {
  const bands = bandsWithin(cadenceBandsSchema.parse(variables.SYNC_BANDS.default!), 28);
  const spreadMs = Math.min(...bands.map((band) => band.intervalSeconds)) * 1000;
  const executable = findExecutable('redis-server', process.env.PATH);
  check(executable !== null, 'the tick bench needs redis-server on PATH (a Redis of its own to fill)');
  const redisServer = await startRedisServer({ executable });
  const db = await createTestDatabase('tick_bench');
  const logger = createLogger({ level: 'silent' });
  const errors = createRepeatedErrorLog(logger);
  const redis = createRedisConnection(redisServer.url, 'command', 'tick-bench');
  let syncQueue: Queue<SyncJobData> | undefined;
  try {
    syncQueue = createSyncQueue({ connection: redis, prefix: 'tick-bench', errors });
    const vault = createTokenVault(vaultKeyFromBase64(randomBytes(32).toString('base64')));
    const deps: Omit<TickDeps, 'now'> = {
      connections: createConnectionStore(db.prisma, vault),
      syncQueue,
      maxAttempts: Number(variables.SYNC_MAX_ATTEMPTS.default),
      bands,
      horizonDays: 28,
      accountIntervalSeconds: 900,
      // No budget: at a million connections the budget is tens of thousands of calls a second (~44,000 at the
      // default bands), so everything due goes; this times the dearest tick.
      budget: createRedisCallBudget(redis, 'tick-bench:budget', 0),
      logger,
    };
    const points: Point[] = [];
    const generateMs: Record<number, number> = {};
    let generated = 0;
    for (const size of options.sizes) {
      const started = performance.now();
      await insertBulkConnections(db.sql, {
        from: generated,
        to: size,
        bandNames: bands.map((band) => band.name),
        base: new Date(BASE_MS),
        spreadMs,
      });
      generateMs[size] = performance.now() - started;
      console.log(
        `tick: generated rows ${generated}–${size} in ${round(generateMs[size] / 1000, 1)} s, load ${loadAverage()}`,
      );
      generated = size;
      points.push(await measurePoint(db, redis, redisServer.pid, deps, size, options.due, options.ticks));
    }
    const largest = generated;
    for (const due of options.dueAtLargest)
      points.push(await measurePoint(db, redis, redisServer.pid, deps, largest, due, options.ticks));

    const dead = await measureDeadEntries(db, options.deadEntries, options.due, spreadMs);

    for (const point of points)
      check(
        point.enqueued === point.due,
        `a tick at ${point.kept} kept with ${point.due} due enqueued ${point.enqueued}`,
      );
    const atLargest = points.find((p) => p.kept === largest && p.wanted === options.due)!;
    const largestDue = points.reduce((a, b) => (b.due > a.due ? b : a));
    const figures: BenchSection['figures'] = {
      tickMsAt1M: round(atLargest.tickMs, 1),
      queryMsAt1M: round(atLargest.queryMs, 1),
      planAt1M: planName(atLargest.plan),
      rowsReadAt1M: atLargest.plan.rowsRead,
      perDueMsAtLargest: round(largestDue.tickMs / largestDue.due, 3),
      nodeCpuMsPerDue: round(largestDue.nodeCpuMs / largestDue.due, 3),
      redisCpuMsPerDue: round(largestDue.redisCpuMs / largestDue.due, 3),
      dueEnqueuedPerSecondAtLargest: Math.round(largestDue.due / (largestDue.tickMs / 1000)),
      deadEntries: dead.synced,
      queryMsWithDeadEntries: round(dead.first.executionMs, 1),
      queryBlocksWithDeadEntries: dead.first.blocks,
      queryMsWithDeadEntriesAgain: round(dead.again.executionMs, 1),
      queryBlocksWithDeadEntriesAgain: dead.again.blocks,
      queryMsAfterVacuum: round(dead.vacuumed.executionMs, 1),
      queryBlocksAfterVacuum: dead.vacuumed.blocks,
      generateSecondsTotal: round(Object.values(generateMs).reduce((a, b) => a + b, 0) / 1000, 1),
      loadAverage1mAtEnd: loadAverage(),
    };
    for (const size of options.sizes)
      figures[`generateSeconds${size}`] = round((generateMs[size] ?? NaN) / 1000, 1);
    for (const point of points) {
      const key = `${point.kept}kept${point.wanted}due`;
      figures[`tickMs_${key}`] = round(point.tickMs, 1);
      figures[`nodeCpuMs_${key}`] = round(point.nodeCpuMs);
      figures[`redisCpuMs_${key}`] = round(point.redisCpuMs);
      figures[`queryMs_${key}`] = round(point.queryMs, 1);
      figures[`rowsRead_${key}`] = point.plan.rowsRead;
      figures[`blocks_${key}`] = point.plan.blocks;
    }
    return [
      {
        benchmark: 'scheduler tick at a million connections',
        inputs: {
          sizes: options.sizes.join(','),
          due: options.due,
          dueAtLargest: options.dueAtLargest.join(','),
          deadEntries: options.deadEntries,
          ticksPerPoint: options.ticks,
          bands: variables.SYNC_BANDS.default!,
          batchSize: deps.batchSize ?? TICK_BATCH_SIZE,
        },
        figures,
        targets: {
          tickAt1M: {
            target: `≤ ${TARGET_MS} ms with ${options.due} due`,
            met: atLargest.tickMs <= TARGET_MS,
          },
        },
      },
    ];
  } finally {
    await syncQueue?.close().catch(() => undefined);
    redis.disconnect();
    await db.drop();
    await redisServer.stop();
  }
}
