// Benchmark (issue 42): the unit costs the capacity model (capacity-model.ts, docs/scaling.md) multiplies by an
// installation's size. The production build (dist/) runs as separate processes (scheduler, worker, web) on a
// redis-server of this bench's own, so INFO's command counts, bytes, CPU time and memory are slotfeed's alone;
// CPU is CPU time (/proc), never wall time, since the machine is shared.
//
// - Syncs at the default bands, in real time with every interval a quarter as long (the nearest band's 4 minutes
//   become the settings' floor of 1 minute): per sync, Redis commands, bytes and CPU, worker and scheduler CPU,
//   Postgres row writes; worker CPU per upstream call; Redis memory per connection.
// - How many syncs and calls a connection makes per hour at the default bands: the freshness benchmark's schedule
//   (its simulator world and the scheduler's own allocation and band schedule) in virtual time, a day of it.
// - Rows and bytes per connection-day: the growth benchmark at the default bands, the history packed.
// - CalDAV pushes, webhook deliveries and web requests (feeds 200 / 304, a share page): unit-costs-deliveries.ts.
// - One Redis core's throughput on this machine: redis-benchmark against the same server.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Queue } from 'bullmq';
import pLimit from 'p-limit';
import { startOwnRedis, type OwnRedis } from '../chaos/chaos-support.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { SYNC_QUEUE } from '../../src/sync/queues.js';
import type { SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { check, type BenchSection } from './bench-result.js';
import { bandsOf, makeWorld, runSchedule, type Schedule } from './freshness.js';
import { perSyncAndCall } from './capacity-model.js';
import { benchGrowth } from './growth.js';
import { cpuMsOf, loadAverage, round } from './process-stats.js';
import { rowWritesBetween, rowWritesByTable } from './postgres-writes.js';
import { readRedisCounters, redisFiguresPer, redisUseBetween } from './redis-stats.js';
import { runtimeImageMemorySettings } from './runtime-memory.js';
import { startWorkers } from './sync-round.js';
import { measureDeliveries } from './unit-costs-deliveries.js';

const execFileAsync = promisify(execFile);

export interface UnitCostsOptions {
  /** Connections synced in real time (default 60). */
  connections?: number;
  /** Seconds the sync measure lasts, after the warm-up (default 180). */
  measureSeconds?: number;
  /** CalDAV destinations, each pushed one change (default 100). */
  destinations?: number;
  /** Webhook endpoints, each delivered one change (default 100). */
  webhooks?: number;
  /** Requests per web path measured (default 1000). */
  requests?: number;
  /** Connections of the virtual-time schedule (default 1000). */
  scheduleConnections?: number;
  /** Connections of the growth run at the default bands (default 5). */
  growthConnections?: number;
}

/** Every interval divided by this in the real-time run; the settings allow no band interval under a minute. */
const TIME_SCALE = 4;
const IDLE_SECONDS = 15;
const EVENT_TYPES = 3;
const HORIZON_DAYS = 28;

/** SYNC_BANDS, SYNC_ACCOUNT_INTERVAL and SYNC_TICK_SECONDS with every interval TIME_SCALE times shorter. */
function scaledSchedule(schedule: Schedule) {
  const bands = bandsOf(schedule.bands)
    .map((band) => {
      const days = band.toDay === Infinity ? '*' : `${band.toDay}d`;
      return `${days}=${Math.max(60, Math.round(band.intervalSeconds / TIME_SCALE))}s`;
    })
    .join(',');
  return {
    SYNC_BANDS: bands,
    SYNC_ADAPT_FACTORS: `${schedule.adapt.fastest},${schedule.adapt.slowest}`,
    SYNC_ACCOUNT_INTERVAL: `${Math.max(60, Math.round(schedule.accountIntervalSeconds / TIME_SCALE))}s`,
    SYNC_TICK_SECONDS: String(Math.round(30 / TIME_SCALE)),
  };
}

const apiCalls = (h: SyncHarness) =>
  Object.entries(h.sim.control.callCounts())
    .filter(([endpoint]) => endpoint.startsWith('GET /') && endpoint !== 'GET /login')
    .reduce((sum, [, n]) => sum + n, 0);

async function redisBenchmark(redis: OwnRedis): Promise<Record<string, number>> {
  const { stdout } = await execFileAsync('redis-benchmark', [
    ...['-h', '127.0.0.1', '-p', String(redis.port)],
    ...['-t', 'get,set,incr,zadd', '-n', '200000', '-c', '50', '--csv'],
  ]);
  const rates: Record<string, number> = {};
  for (const line of stdout.split('\n').slice(1)) {
    const [test, rps] = line.split(',').map((cell) => cell.replaceAll('"', ''));
    if (test && rps) rates[test.split(' ')[0]!.toLowerCase()] = Number(rps);
  }
  return rates;
}

export async function benchUnitCosts(
  defaults: Schedule,
  options: UnitCostsOptions = {},
): Promise<BenchSection[]> {
  const connections = options.connections ?? 60;
  const measureSeconds = options.measureSeconds ?? 180;
  const loadAtStart = loadAverage();
  const sections: BenchSection[] = [];

  // How often a connection syncs at the default bands, in virtual time: a day after 6 hours of warm-up.
  const scheduleOptions = {
    connections: options.scheduleConnections ?? 1000,
    // Ample: the fixed schedule needs ~58 calls/s per 1,000 connections, the default bands 0.76× that.
    budgetPerSecond: ((options.scheduleConnections ?? 1000) / 1000) * 100,
    warmupHours: 6,
    measureHours: 24,
    bookingsPerDay: 2,
  };
  const world = await makeWorld(scheduleOptions);
  const scheduled = await runSchedule(world, defaults, scheduleOptions);
  const syncsPerConnectionHour = scheduled.syncsPerConnectionHour ?? NaN;
  sections.push({
    benchmark: 'unit costs: syncs per connection-hour at the default bands (virtual time)',
    inputs: {
      bands: defaults.name,
      connections: scheduleOptions.connections,
      eventTypesEach: EVENT_TYPES,
      horizonDays: HORIZON_DAYS,
      budgetCallsPerSecond: scheduleOptions.budgetPerSecond,
      simulatedHours: `${scheduleOptions.warmupHours} warm-up + ${scheduleOptions.measureHours} measured`,
      bookingsPerConnectionDay: scheduleOptions.bookingsPerDay,
    },
    figures: {
      syncsPerConnectionHour: round(syncsPerConnectionHour, 2),
      callsPerConnectionHour: round(scheduled.callsPerConnectionHour, 1),
      callsPerSync: round(scheduled.callsPerConnectionHour / syncsPerConnectionHour, 1),
    },
  });

  // Rows and bytes a connection adds a day at the default bands (the growth benchmark's churn, its syncs
  // scheduled band by band, and the history packed as retention keeps it).
  const [growth] = await benchGrowth({
    schedule: 'default bands',
    connections: options.growthConnections ?? 2,
    days: 1,
  });
  sections.push({ ...growth!, benchmark: 'unit costs: history growth at the default bands' });

  const redis = await startOwnRedis();
  const counters = createRedisConnection(redis.url, 'command', 'bench-unit-costs');
  const h = await createSyncHarness('bench_unit_costs', {
    clock: null,
    simulator: {
      users: connections,
      seed: 1,
      eventTypesPerUser: EVENT_TYPES,
      faults: { latencyMs: 50, jitterMs: 20 },
    },
    env: {
      SYNC_HORIZON_DAYS: String(HORIZON_DAYS),
      CALDAV_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    },
  });
  const processes: SlotfeedProcess[] = [];
  try {
    const connect = pLimit(8);
    const ids = await Promise.all(h.sim.users.map((u) => connect(() => h.connect(u.email))));
    const runtime = runtimeImageMemorySettings();
    // The processes' environment: the harness's database and simulator, this bench's Redis, production's
    // memory settings and log level; an upstream limit high enough never to hold a sync back (its counting in
    // Redis is part of every call's cost all the same).
    const roleEnv = {
      REDIS_URL: redis.url,
      MALLOC_ARENA_MAX: runtime.MALLOC_ARENA_MAX,
      NODE_OPTIONS: runtime.NODE_OPTIONS,
      LOG_LEVEL: 'info',
      UPSTREAM_RATE_LIMIT_PER_SECOND: '200',
      CALENDBOOK_TIMEOUT_MS: '10000',
      ...scaledSchedule(defaults),
    };
    const prisma = h.clients.prisma;
    // Nobody due until both processes run and their idle cost is measured.
    await prisma.connection.updateMany({ data: { nextSyncAt: new Date('2100-01-01T00:00:00Z') } });
    const emptyMemory = (await readRedisCounters(counters)).usedMemoryBytes;
    const [worker] = await startWorkers(h, 1, roleEnv);
    processes.push(worker!);
    const [scheduler] = await startWorkers(h, 1, roleEnv, 'scheduler');
    processes.push(scheduler!);
    const pids = [worker!.child.pid ?? 0, scheduler!.child.pid ?? 0] as const;
    const succeeded = () => prisma.syncRun.count({ where: { outcome: 'succeeded' } });
    const read = async () => ({
      redis: await readRedisCounters(counters),
      worker: cpuMsOf(pids[0]),
      scheduler: cpuMsOf(pids[1]),
      syncs: await succeeded(),
      calls: apiCalls(h),
      rows: await rowWritesByTable(h),
      at: performance.now(),
    });
    type Reading = Awaited<ReturnType<typeof read>>;

    // Idle: the scheduler ticking with nothing due, the worker waiting on its queues. Measured once the processes
    // have settled: right after "slotfeed running" they still compile and warm up, and that start-up work, taken
    // as the idle rate and subtracted from the longer measure, once made the scheduler's CPU per sync negative.
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idleFrom = await read();
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idleTo = await read();
    const idleSeconds = (idleTo.at - idleFrom.at) / 1000;
    const idle = redisUseBetween(idleFrom.redis, idleTo.redis, idleSeconds);
    /** Syncs, calls and what they cost between two readings, the idle rate taken off. */
    const between = (from: Reading, to: Reading) => {
      const seconds = (to.at - from.at) / 1000;
      const idleCpu = (which: 'worker' | 'scheduler') =>
        ((idleTo[which] - idleFrom[which]) / idleSeconds) * seconds;
      return {
        syncs: to.syncs - from.syncs,
        calls: to.calls - from.calls,
        redis: redisUseBetween(from.redis, to.redis, seconds, idle),
        workerCpuMs: to.worker - from.worker - idleCpu('worker'),
        schedulerCpuMs: to.scheduler - from.scheduler - idleCpu('scheduler'),
        rowWrites: rowWritesBetween(from.rows, to.rows),
      };
    };

    // First syncs: every connection due at once, each reading everything (many calls per sync).
    const firstFrom = await read();
    await prisma.connection.updateMany({ data: { nextSyncAt: new Date() } });
    await waitFor(
      () => prisma.connection.count({ where: { id: { in: ids }, lastGoodSyncAt: { not: null } } }),
      (n) => n === ids.length,
      { timeoutMs: 600_000, intervalMs: 500, what: 'every first sync' },
    );
    const first = between(firstFrom, await read());
    // A minute of scheduled syncs (the nearest band's scaled interval) before the measure of them.
    await new Promise((resolve) => setTimeout(resolve, 60_000));
    const scheduledFrom = await read();
    await new Promise((resolve) => setTimeout(resolve, measureSeconds * 1000));
    const scheduledTo = await read();
    const scheduledRun = between(scheduledFrom, scheduledTo);
    const { syncs, calls } = scheduledRun;
    check(syncs > 0 && calls > 0, `the measure saw ${syncs} syncs and ${calls} calls`);
    check(
      scheduledRun.workerCpuMs > 0 && scheduledRun.schedulerCpuMs > 0,
      `the measure's CPU less the idle rate is not positive (worker ${scheduledRun.workerCpuMs} ms, scheduler ` +
        `${scheduledRun.schedulerCpuMs} ms): the idle window was not idle`,
    );
    check(
      (await prisma.syncRun.count({ where: { outcome: 'failed' } })) === 0,
      'a sync failed during the measure',
    );
    const split = (cost: (m: typeof first) => number) => perSyncAndCall(first, scheduledRun, cost);
    const workerSplit = split((m) => m.workerCpuMs);
    const commandsSplit = split((m) => m.redis.commands);
    const redisCpuSplit = split((m) => m.redis.cpuMs);
    const bytesInSplit = split((m) => m.redis.netInputBytes);
    const bytesOutSplit = split((m) => m.redis.netOutputBytes);
    sections.push({
      benchmark: 'unit costs: a sync at the default bands (production build, own Redis)',
      inputs: {
        connections,
        eventTypesEach: EVENT_TYPES,
        horizonDays: HORIZON_DAYS,
        settings: Object.entries(scaledSchedule(defaults))
          .map(([name, value]) => `${name}=${value}`)
          .join(' '),
        timeScale: `every interval ÷ ${TIME_SCALE} (real time)`,
        measuredSeconds: measureSeconds,
        processes: '1 worker, 1 scheduler (dist/), the simulator and Postgres on the same machine',
        simulatorLatencyMs: '50 ± 20',
        firstSyncs: `${first.syncs} syncs, ${first.calls} calls`,
        loadAverage1mAtStart: loadAtStart,
        loadAverage1mAfterSyncs: loadAverage(),
      },
      figures: {
        syncs,
        upstreamCalls: calls,
        callsPerSync: round(calls / syncs, 1),
        ...redisFiguresPer('Sync', scheduledRun.redis, syncs),
        workerCpuMsPerSync: round(scheduledRun.workerCpuMs / syncs, 2),
        schedulerCpuMsPerSync: round(scheduledRun.schedulerCpuMs / syncs, 3),
        postgresRowWritesPerSync: round(scheduledRun.rowWrites / syncs, 1),
        firstSyncCallsPerSync: round(first.calls / first.syncs, 1),
        firstSyncWorkerCpuMsPerSync: round(first.workerCpuMs / first.syncs, 2),
        firstSyncRedisCommandsPerSync: round(first.redis.commands / first.syncs, 1),
        // Any sync = a fixed part + a part per upstream call, from the two mixes above (first syncs read
        // everything, scheduled ones a band or two): what the model applies to the virtual-time mix.
        workerCpuMsPerSyncFixed: round(workerSplit.perSync, 2),
        workerCpuMsPerCall: round(workerSplit.perCall, 3),
        redisCommandsPerSyncFixed: round(commandsSplit.perSync, 1),
        redisCommandsPerCall: round(commandsSplit.perCall, 2),
        redisCpuMsPerSyncFixed: round(redisCpuSplit.perSync, 3),
        redisCpuMsPerCall: round(redisCpuSplit.perCall, 4),
        redisBytesInPerSyncFixed: round(bytesInSplit.perSync, 0),
        redisBytesInPerCall: round(bytesInSplit.perCall, 0),
        redisBytesOutPerSyncFixed: round(bytesOutSplit.perSync, 0),
        redisBytesOutPerCall: round(bytesOutSplit.perCall, 0),
        redisIdleCommandsPerSecond: round(idle.commands / idle.seconds, 1),
        redisIdleCpuMsPerSecond: round(idle.cpuMs / idle.seconds, 2),
        redisUsedMemoryBytesPerConnection: round(
          (scheduledTo.redis.usedMemoryBytes - emptyMemory) / connections,
          0,
        ),
      },
    });

    // No more syncs: the scheduler stops, the worker finishes what it holds and stays for the deliveries.
    scheduler!.child.kill('SIGTERM');
    await scheduler!.exited;
    // The harness's own queue is on the shared Redis; the processes' is on this bench's.
    const syncQueue = new Queue(SYNC_QUEUE, { connection: counters, prefix: h.config.redis.prefix });
    await waitFor(
      () => syncQueue.getJobCounts('active', 'waiting', 'delayed', 'prioritized'),
      (counts) => Object.values(counts).every((n) => n === 0),
      { timeoutMs: 120_000, intervalMs: 500, what: 'the sync queue to drain' },
    );
    await syncQueue.close();
    sections.push(
      ...(await measureDeliveries({
        h,
        counters,
        worker: worker!,
        roleEnv,
        destinations: options.destinations ?? 100,
        webhooks: options.webhooks ?? 100,
        requests: options.requests ?? 1000,
      })),
    );

    const rates = await redisBenchmark(redis);
    sections.push({
      benchmark: 'unit costs: one Redis core on this machine (redis-benchmark)',
      inputs: {
        server: 'redis-server 7, the bench’s own, no persistence',
        command: 'redis-benchmark -t get,set,incr,zadd -n 200000 -c 50',
        loadAverage1m: loadAverage(),
      },
      figures: Object.fromEntries(Object.entries(rates).map(([test, rps]) => [`${test}PerSecond`, rps])),
    });
    return sections;
  } finally {
    for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGTERM');
    await Promise.all(processes.map((p) => p.exited));
    counters.disconnect();
    await h.close();
    await redis.stop();
  }
}
