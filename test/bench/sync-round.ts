// Benchmark 1 + 2 + worker memory: one sync round of N simulated connections (3 event types each, 28-day
// horizon, simulator latency 50 ms ± 20 ms) through the real queue, two `slotfeed worker` child processes, the
// upstream client and Postgres, under the shared upstream rate limit R. The round can go no faster than
// (calls needed) ÷ R, so efficiency = that bound ÷ the measured wall time. A second round with no limit (the
// same connections, nothing changed upstream) shows where slotfeed's own cost takes over: its rate, and the
// workers' CPU per call and per stored slot. Correctness is asserted (calls per sync are the minimum the API
// allows; the no-change round writes no snapshot rows); timing is reported, never asserted.
import pLimit from 'p-limit';
import { describeVariables } from '../../src/config.js';
import { enqueueSyncs } from '../../src/sync/queues.js';
import { spawnSlotfeed, type SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { apiCallsOf, expectedSync, snapshotRowCounts } from '../support/sync-truth.js';
import { waitFor } from '../support/wait-for.js';
import { check, type BenchSection } from './bench-result.js';
import { busyShare, cpuMsOf, memoryMibOf, round, sampleMachineCpu } from './process-stats.js';
import { runtimeImageMemorySettings } from './runtime-memory.js';

export interface SyncRoundOptions {
  connections: number;
  /** Upstream calls per second across all workers (UPSTREAM_RATE_LIMIT_PER_SECOND). */
  rateLimitPerSecond: number;
  workerProcesses?: number;
  workerConcurrency?: number;
  fetchConcurrency?: number;
  /** Connections re-synced in the no-limit round (default: at most 300, to keep the whole bench short). */
  unlimitedConnections?: number;
}

const EVENT_TYPES_PER_CONNECTION = 3;
const HORIZON_DAYS = 28;
const LATENCY_MS = 50;
const JITTER_MS = 20;
const RSS_TARGET_MIB = 300;
const EFFICIENCY_TARGET = 0.85;

interface RoundMeasure {
  wallSeconds: number;
  calls: number;
  workerCpuMs: number;
  benchProcessCpuMs: number;
  machineBusyShare: number;
  failedRuns: number;
}

function configDefault(name: string): string {
  const value = describeVariables().find((variable) => variable.name === name)?.default;
  check(value !== undefined, `${name} has no default`);
  return value;
}

/** `count` processes of `role` (the worker's by default) from the build, once each says it is running. */
export async function startWorkers(
  h: SyncHarness,
  count: number,
  env: Record<string, string>,
  role: 'worker' | 'scheduler' | 'web' = 'worker',
) {
  const workers: SlotfeedProcess[] = [];
  // As production runs it: the build (`npm run bench` builds first), not TypeScript through tsx.
  for (let i = 0; i < count; i++) {
    workers.push(spawnSlotfeed([role], { ...h.env, ...env }, { from: 'build' }));
  }
  await Promise.all(
    workers.map((w) =>
      waitFor(
        async () => w.output(),
        (out) => out.includes('slotfeed running') || w.child.exitCode !== null,
        { timeoutMs: 60_000, what: `a ${role} process to start` },
      ),
    ),
  );
  for (const w of workers) check(w.child.exitCode === null, `${role} exited at start: ${w.output()}`);
  return workers;
}

/** Stops the workers; returns the memory each reported on its way out (RSS and what of it is JS heap). */
async function stopWorkers(workers: SlotfeedProcess[]): Promise<string[]> {
  for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
  return workers.map((w) => {
    const line = w
      .output()
      .split('\n')
      .find((l) => l.includes('"memoryMiB"'));
    const memory = line ? (JSON.parse(line) as { memoryMiB?: Record<string, number> }).memoryMiB : undefined;
    return memory
      ? Object.entries(memory)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')
      : 'not reported';
  });
}

function apiCalls(h: SyncHarness): number {
  return Object.entries(h.sim.control.callCounts())
    .filter(([endpoint]) => endpoint.startsWith('GET /') && endpoint !== 'GET /login')
    .reduce((sum, [, n]) => sum + n, 0);
}

async function runRound(h: SyncHarness, ids: string[], workers: SlotfeedProcess[]): Promise<RoundMeasure> {
  const prisma = h.clients.prisma;
  await prisma.connection.updateMany({ where: { id: { in: ids } }, data: { lastSyncOutcome: null } });
  const failedBefore = await prisma.syncRun.count({ where: { outcome: 'failed' } });
  h.sim.control.resetCallCounts();
  const pids = workers.map((w) => w.child.pid ?? 0);
  const cpuBefore = pids.map(cpuMsOf);
  const benchCpuBefore = process.cpuUsage();
  const machineBefore = sampleMachineCpu();
  const started = performance.now();
  await enqueueSyncs(h.clients.syncQueue, ids, 3);
  await waitFor(
    () => prisma.connection.count({ where: { id: { in: ids }, lastSyncOutcome: 'succeeded' } }),
    (n) => n === ids.length,
    { timeoutMs: 1_800_000, intervalMs: 100, what: 'the round to finish' },
  );
  const wallSeconds = (performance.now() - started) / 1000;
  const benchCpu = process.cpuUsage(benchCpuBefore);
  return {
    wallSeconds,
    calls: apiCalls(h),
    workerCpuMs: pids.map(cpuMsOf).reduce((sum, ms, i) => sum + ms - (cpuBefore[i] ?? 0), 0),
    benchProcessCpuMs: (benchCpu.user + benchCpu.system) / 1000,
    machineBusyShare: busyShare(machineBefore, sampleMachineCpu()),
    failedRuns: (await prisma.syncRun.count({ where: { outcome: 'failed' } })) - failedBefore,
  };
}

/** Rows a round added to every snapshot table, plus slots it closed (an update). */
async function snapshotWrites(h: SyncHarness) {
  const counts = await snapshotRowCounts(h.clients.prisma);
  const closed = await h.clients.prisma.slot.count({ where: { goneAt: { not: null } } });
  return { ...counts, closed };
}

const writesBetween = (a: Awaited<ReturnType<typeof snapshotWrites>>, b: typeof a) =>
  (['eventTypes', 'profiles', 'overviews', 'slots', 'closed'] as const).reduce(
    (sum, key) => sum + b[key] - a[key],
    0,
  );

export async function benchSyncRound(options: SyncRoundOptions): Promise<BenchSection[]> {
  const { connections, rateLimitPerSecond } = options;
  const workerProcesses = options.workerProcesses ?? 2;
  // slotfeed's defaults unless asked otherwise: the round measures what an operator gets out of the box.
  const workerConcurrency = options.workerConcurrency ?? Number(configDefault('WORKER_CONCURRENCY'));
  const fetchConcurrency = options.fetchConcurrency ?? Number(configDefault('SYNC_FETCH_CONCURRENCY'));
  const unlimitedWorkerConcurrency = workerConcurrency * 2;
  // The simulator's clock stands still for the whole run, so slots starting during it do not vanish between
  // the two rounds (which would make the "no change" round a change).
  const simNow = new Date();
  const h = await createSyncHarness('bench_sync', {
    clock: null,
    simulator: {
      users: connections,
      seed: 1,
      eventTypesPerUser: EVENT_TYPES_PER_CONNECTION,
      now: () => simNow,
      faults: { latencyMs: LATENCY_MS, jitterMs: JITTER_MS },
    },
    env: { SYNC_HORIZON_DAYS: String(HORIZON_DAYS) },
  });
  // BENCH_CPU_PROF_DIR: the workers write V8 CPU profiles there when they exit (for `--cpu-prof` analysis).
  // BENCH_WORKER_NODE_OPTIONS: extra Node flags for the workers (e.g. a heap limit, to tell garbage from growth).
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  const runtime = runtimeImageMemorySettings();
  const nodeOptions = [
    runtime.NODE_OPTIONS,
    profileDir ? `--cpu-prof --cpu-prof-dir=${profileDir}` : '',
    process.env.BENCH_WORKER_NODE_OPTIONS ?? '',
  ].join(' ');
  const workerEnv = {
    MALLOC_ARENA_MAX: runtime.MALLOC_ARENA_MAX,
    NODE_OPTIONS: nodeOptions.trim(),
    LOG_LEVEL: 'info',
    WORKER_CONCURRENCY: String(workerConcurrency),
    SYNC_FETCH_CONCURRENCY: String(fetchConcurrency),
    SYNC_HORIZON_DAYS: String(HORIZON_DAYS),
    CALENDBOOK_TIMEOUT_MS: '10000',
    SYNC_BACKOFF_MS: '1000',
  };
  const burst = 5;
  let workers: SlotfeedProcess[] = [];
  try {
    const connect = pLimit(16);
    const ids = await Promise.all(h.sim.users.map((u) => connect(() => h.connect(u.email))));

    workers = await startWorkers(h, workerProcesses, {
      ...workerEnv,
      UPSTREAM_RATE_LIMIT_PER_SECOND: String(rateLimitPerSecond),
      UPSTREAM_RATE_LIMIT_BURST: String(burst),
    });
    const memoryIdle = workers.map((w) => memoryMibOf(w.child.pid ?? 0));
    const roundStart = new Date();
    const limited = await runRound(h, ids, workers);
    const memory = workers.map((w) => memoryMibOf(w.child.pid ?? 0));

    // Figure 2: every sync made exactly the calls the API requires, no more.
    const byUser = h.sim.users.map((u) => ({
      expected: expectedSync(h.sim, u.email, roundStart, HORIZON_DAYS).calls,
      made: apiCallsOf(h.sim, u.id),
    }));
    const minimumCalls = byUser.reduce((sum, u) => sum + u.expected, 0);
    const offMinimum = byUser.filter((u) => u.made !== u.expected).length;
    check(
      offMinimum === 0 && limited.calls === minimumCalls,
      `${offMinimum} syncs made other than the minimum calls (${limited.calls} made, ${minimumCalls} needed)`,
    );
    const slotsStored = await h.clients.prisma.slot.count({ where: { goneAt: null } });

    const memoryAtShutdown = await stopWorkers(workers);
    // With no limit, the default concurrency leaves the round waiting on the simulator's latency; twice as many
    // jobs at once load the machine, which is what this round is for.
    workers = await startWorkers(h, workerProcesses, {
      ...workerEnv,
      UPSTREAM_RATE_LIMIT_PER_SECOND: '0',
      WORKER_CONCURRENCY: String(unlimitedWorkerConcurrency),
    });
    const before = await snapshotWrites(h);
    const resynced = ids.slice(0, options.unlimitedConnections ?? Math.min(connections, 300));
    const unlimited = await runRound(h, resynced, workers);
    const rowsWritten = writesBetween(before, await snapshotWrites(h));
    check(rowsWritten === 0, `a no-change re-sync wrote ${rowsWritten} snapshot rows`);
    const resyncMinimum = byUser.slice(0, resynced.length).reduce((sum, u) => sum + u.expected, 0);
    check(
      unlimited.calls === resyncMinimum,
      `no-change re-sync made ${unlimited.calls} calls, not ${resyncMinimum}`,
    );

    const bound = limited.calls / rateLimitPerSecond;
    const efficiency = bound / limited.wallSeconds;
    const peakRss = Math.max(...memory.map((m) => m.rss));
    const inputs = {
      connections,
      eventTypesPerConnection: EVENT_TYPES_PER_CONNECTION,
      horizonDays: HORIZON_DAYS,
      simulatorLatencyMs: `${LATENCY_MS} ± ${JITTER_MS}`,
      workerProcesses,
      workerConcurrency,
      fetchConcurrency,
      workerMemorySettings: `MALLOC_ARENA_MAX=${runtime.MALLOC_ARENA_MAX} ${runtime.NODE_OPTIONS}`,
    };
    return [
      {
        benchmark: 'sync round vs upstream rate limit',
        inputs: { ...inputs, rateLimitPerSecond, rateLimitBurst: burst },
        figures: {
          upstreamCalls: limited.calls,
          callsPerConnection: round(limited.calls / connections, 1),
          boundSeconds: round(bound, 1),
          wallSeconds: round(limited.wallSeconds, 1),
          efficiency: round(efficiency, 3),
          callsPerSecond: round(limited.calls / limited.wallSeconds, 1),
          slotsStored,
          workerCpuMsPerCall: round(limited.workerCpuMs / limited.calls, 3),
          workerCpuMsPerStoredSlot: round(limited.workerCpuMs / slotsStored, 3),
          machineCpuBusy: round(limited.machineBusyShare, 2),
          failedRuns: limited.failedRuns,
          workerRssMiBIdle: memoryIdle.map((m) => round(m.rss, 0)).join(' / '),
          workerRssMiBAtEnd: memory.map((m) => round(m.rss, 0)).join(' / '),
          workerPeakRssMiB: memory.map((m) => round(m.peak, 0)).join(' / '),
          workerPrivateRssMiBAtEnd: memory.map((m) => round(m.anon, 0)).join(' / '),
          workerMemoryMiBAtShutdown: memoryAtShutdown.join(' / '),
        },
        targets: {
          efficiency: { target: `≥ ${EFFICIENCY_TARGET}`, met: efficiency >= EFFICIENCY_TARGET },
          workerRss: { target: `< ${RSS_TARGET_MIB} MiB`, met: peakRss < RSS_TARGET_MIB },
        },
      },
      {
        benchmark: 'sync round, no upstream limit (no-change re-sync)',
        inputs: {
          ...inputs,
          connections: resynced.length,
          workerConcurrency: unlimitedWorkerConcurrency,
          rateLimitPerSecond: 'none',
        },
        figures: {
          upstreamCalls: unlimited.calls,
          wallSeconds: round(unlimited.wallSeconds, 1),
          callsPerSecond: round(unlimited.calls / unlimited.wallSeconds, 1),
          workerCpuMsPerCall: round(unlimited.workerCpuMs / unlimited.calls, 3),
          // Attributed to the store: the first round's worker CPU beyond what its calls alone cost here.
          workerCpuMsPerStoredSlotBeyondCalls: round(
            (limited.workerCpuMs - (unlimited.workerCpuMs / unlimited.calls) * limited.calls) / slotsStored,
            3,
          ),
          workerCoresBusy: round(unlimited.workerCpuMs / 1000 / unlimited.wallSeconds, 2),
          simulatorAndBenchCoresBusy: round(unlimited.benchProcessCpuMs / 1000 / unlimited.wallSeconds, 2),
          machineCpuBusy: round(unlimited.machineBusyShare, 2),
          failedRuns: unlimited.failedRuns,
        },
      },
      {
        benchmark: 'upstream call economy',
        inputs,
        figures: {
          minimumCallsPerSync: '2 + Σ per enabled event type (windows + available dates)',
          syncsAtTheMinimum: `${connections - offMinimum} / ${connections}`,
          noChangeResyncSnapshotRows: rowsWritten,
        },
      },
    ];
  } finally {
    await stopWorkers(workers);
    await h.close();
  }
}
