// Benchmark: slotfeed's own CalDAV push ceiling and its fairness across hosts (issue 35). 1,000 destinations
// (BENCH_CALDAV_HOSTS_DESTINATIONS) over 20 hosts (BENCH_CALDAV_HOSTS), each a minimal CalDAV endpoint of the
// bench's own on a loopback port (minimal-caldav-host.ts) answering after 50 ms, as a distant provider would: no
// server's own limit is in the way, so what is measured is slotfeed. Setup as in caldav-push.ts (connections,
// default feeds of three blocks, one destination each given its calendar's URL, the worker role's first pushes);
// then three runs, each committing one change to every feed through the store, eight at a time, with the wake-up a
// sync's commit raises:
//   1. every host answering after 50 ms: p95 commit → answer, pushes per second, and the bench process's CPU
//      per push (process.cpuUsage: the worker role, the bench's commits and polls, and the 20 endpoints — an
//      upper bound of the worker's own);
//   2. one host answering after 3 s: the other hosts' p95 against run 1's (target within 1.5x), and the most
//      requests the slow host had under way at once, counted on its side (target ≤ CALDAV_HOST_CONCURRENCY);
//   3. one host answering 429 with Retry-After: 30: the same two figures.
// In runs 2 and 3 the measure ends when every other host's destination is answered; the odd host is then put
// back to 50 ms and the bench waits for its destinations too (not measured) before the next run.
//
// Issue 43 added a run between 1 and 2 with every push waiting: a change per feed committed while the caldav queue
// is paused, then resumed and timed to the last answer, so the bench process's CPU in it is the pushes' alone (and
// the endpoints' and the bench's polls'): the figure held to 4 ms per push. Each run also reports Postgres's CPU
// (the bench database's backends) and Redis's (a redis-server of the bench's own) per push, and the hosts' busy
// fraction and requests in service, counted on their side (BENCH_CPU_PROFILE=<dir>: a CPU profile of each run).
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { DISPATCH_BATCH } from '../../src/destinations/caldav-queue.js';
import { findExecutable, startRedisServer } from '../../src/demo/redis-server-process.js';
import { commitSuccessfulSync, type SnapshotInput } from '../../src/store/snapshots.js';
import type { FetchedSlot } from '../../src/store/slot-diff.js';
import { createWebHarness } from '../support/web-harness.js';
import { check, type BenchSection } from './bench-result.js';
import { profilePhase } from './cpu-profile.js';
import { startMinimalCalDavHost, type HostBehaviour, type MinimalCalDavHost } from './minimal-caldav-host.js';
import { loadAverage, round } from './process-stats.js';
import { cpuMsBetween, readPostgresCpu, readProcessCpu } from './store-cpu.js';

const BLOCKS = 3;
const COMMITS_AT_ONCE = 8;
const SETUP_AT_ONCE = 8;
const DELAY_MS = 50;
const SLOW_MS = 3000;
const RETRY_AFTER_S = 30;
const TARGET_P95_MS = 5000;
const TARGET_FAIRNESS = 1.5;
const TARGET_CPU_MS_PER_PUSH = 4;
const CEILING_MS = 15 * 60_000;

function snapshotWith(slots: FetchedSlot[]): SnapshotInput {
  return {
    profile: { payload: { name: 'Bench' }, email: 'bench@example.test', name: 'Bench', timezone: 'UTC' },
    eventTypes: [
      {
        upstreamEventId: 'evt_bench',
        title: 'Bench call',
        durationMinutes: 30,
        enabled: true,
        secret: false,
        url: null,
        color: null,
        payload: { event_id: 'evt_bench' },
      },
    ],
    overviews: [],
    slots,
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await probe())) {
    check(performance.now() - started < CEILING_MS, `${what}: not within ${CEILING_MS / 60_000} minutes`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface RunResult {
  otherP50Ms: number;
  otherP95Ms: number;
  allP95Ms: number;
  pushesPerSecond: number;
  cpuMsPerPush: number;
  postgresCpuMsPerPush: number;
  redisCpuMsPerPush: number;
  /** The measured hosts' mean busy fraction and requests in service, counted on their side. */
  hostBusyFraction: number;
  hostMeanInService: number;
  oddHostMostAtOnce: number;
  oddHostRequests: number;
  requestsPerPush: number;
  loadBefore: number;
  loadAfter: number;
}

export async function benchCaldavHosts(count = 1000, hostCount = 20): Promise<BenchSection[]> {
  const hosts: MinimalCalDavHost[] = [];
  for (let i = 0; i < hostCount; i++) hosts.push(await startMinimalCalDavHost({ delayMs: DELAY_MS }));
  // A Redis of the bench's own: its CPU is then the bench's alone.
  const redisServer = await startRedisServer({
    executable: findExecutable('redis-server', process.env.PATH) ?? 'redis-server',
  });
  const h = await createWebHarness('bench_caldav_hosts', {
    clock: null,
    redisUrl: redisServer.url,
    env: {
      CALDAV_ALLOW_PRIVATE_TARGETS: 'true',
      ...(process.env.BENCH_CALDAV_CONCURRENCY
        ? { CALDAV_CONCURRENCY: process.env.BENCH_CALDAV_CONCURRENCY }
        : {}),
    },
  });
  try {
    const prisma = h.sync.db.prisma;
    const credentials = { username: 'bench', password: 'bench' };
    const hour = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000);
    const slots: FetchedSlot[] = Array.from({ length: BLOCKS * 2 }, (_, i) => {
      const startsAt = new Date(
        hour.getTime() + (Math.floor(i / 2) * 2 + 2) * 3_600_000 + (i % 2) * 1_800_000,
      );
      return { eventId: 'evt_bench', startsAt, endsAt: new Date(startsAt.getTime() + 1_800_000) };
    });
    const run = () => ({
      id: randomUUID(),
      jobId: null,
      attempt: 1,
      startedAt: new Date(),
      callsByEndpoint: {},
    });

    const setupStarted = performance.now();
    const connections: { connectionId: string; destinationId: string; host: number }[] = [];
    const setup = pLimit(SETUP_AT_ONCE);
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        setup(async () => {
          const connection = await prisma.connection.create({
            data: { upstreamUserId: `bench-${randomUUID()}`, timezone: 'UTC' },
          });
          await commitSuccessfulSync(prisma, {
            connectionId: connection.id,
            snapshot: snapshotWith(slots),
            run: run(),
            now: new Date(),
            next: new Date(),
          });
          const { feed } = await h.sync.stores.feeds.ensureDefaultFeed(connection.id);
          const host = i % hostCount;
          const destination = await h.sync.services.caldavDestinations.add({
            feedId: feed.id,
            serverUrl: `${hosts[host]!.origin}/calendars/bench/c${i}/`,
            ...credentials,
          });
          connections.push({ connectionId: connection.id, destinationId: destination.id, host });
        }),
      ),
    );
    await h.sync.startRoles(['worker']);
    const allPushed = async () =>
      (await prisma.caldavDestination.count({
        where: { pendingChanges: 0, lastReconciledAt: { not: null }, lastError: null },
      })) === count;
    await until('the first pushes', allPushed);
    const setupSeconds = (performance.now() - setupStarted) / 1000;

    const queue = h.sync.clients.caldavQueue;
    const readCpu = async () => ({
      bench: process.cpuUsage(),
      postgres: await readPostgresCpu(h.sync.db.sql, h.sync.db.name),
      redis: readProcessCpu(redisServer.pid),
    });
    /**
     * One run: a change committed to every feed, the odd host (hosts[0]) behaving as `odd`; `waiting`: committed
     * while the queue is paused, and measured from its resume.
     */
    const measure = async (
      name: string,
      snapshot: SnapshotInput,
      odd: HostBehaviour | undefined,
      waiting = false,
    ): Promise<RunResult> => {
      const oddHost = hosts[0]!;
      if (odd) oddHost.behaviour = odd;
      const loadBefore = loadAverage();
      const committedAt = new Map<string, number>();
      const commit = pLimit(COMMITS_AT_ONCE);
      const commitAll = () =>
        Promise.all(
          connections.map(({ connectionId }) =>
            commit(async () => {
              await commitSuccessfulSync(prisma, {
                connectionId,
                snapshot,
                run: run(),
                now: new Date(),
                next: new Date(),
              });
              committedAt.set(connectionId, Date.now());
              h.sync.services.feedCommits.notify();
            }),
          ),
        );
      if (waiting) {
        await queue.pause();
        await commitAll();
        await until('the pushes waiting in the paused queue', async () => {
          const counts = await queue.getJobCounts('waiting', 'prioritized');
          return (counts.waiting ?? 0) + (counts.prioritized ?? 0) >= Math.min(count, DISPATCH_BATCH);
        });
      }
      for (const host of hosts) host.resetCounts();
      const cpuBefore = await readCpu();
      const started = Date.now();
      const measured = odd ? connections.filter((c) => c.host !== 0) : connections;
      const measuredIds = measured.map((c) => c.destinationId);
      // Counted while it runs (cheap); the answers' times are read once, at the end.
      const answeredCount = () =>
        prisma.caldavDestination.count({
          where: { id: { in: measuredIds }, pendingChanges: 0, lastPushAt: { gte: new Date(started) } },
        });
      await profilePhase(`caldav-hosts-${name}`, async () => {
        if (waiting) await queue.resume();
        else await commitAll();
        await until('the pushes of the changes', async () => (await answeredCount()) === measured.length);
      });
      const cpuAfter = await readCpu();
      const cpu = process.cpuUsage(cpuBefore.bench);
      const loadAfter = loadAverage();
      const answered = await prisma.caldavDestination.findMany({
        where: { id: { in: measuredIds } },
        select: { id: true, lastPushAt: true },
      });
      const oddHostMostAtOnce = oddHost.mostAtOnce();
      const oddHostRequests = oddHost.requests();
      const measuredHosts = hosts.slice(odd ? 1 : 0);
      const requests = measuredHosts.reduce((sum, host) => sum + host.requests(), 0);
      const inService = measuredHosts.map((host) => host.inService());
      const meanOf = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
      const answeredAt = new Map(answered.map((row) => [row.id, row.lastPushAt!.getTime()]));
      const lagOf = (c: (typeof connections)[number]) =>
        answeredAt.get(c.destinationId)! - (waiting ? started : committedAt.get(c.connectionId)!);
      const others = measured
        .filter((c) => c.host !== 0)
        .map(lagOf)
        .sort((a, b) => a - b);
      const all = measured.map(lagOf).sort((a, b) => a - b);
      const lastAnswer = Math.max(...answeredAt.values());
      if (odd) {
        // The odd host answers again; its destinations catch up before the next run (not measured).
        oddHost.behaviour = { delayMs: DELAY_MS };
        await until('the odd host catching up', async () => {
          const behind = await prisma.caldavDestination.count({
            where: {
              id: { in: connections.filter((c) => c.host === 0).map((c) => c.destinationId) },
              OR: [{ pendingChanges: { gt: 0 } }, { lastPushAt: { lt: new Date(started) } }],
            },
          });
          return behind === 0;
        });
      }
      return {
        otherP50Ms: percentile(others, 50),
        otherP95Ms: percentile(others, 95),
        allP95Ms: percentile(all, 95),
        pushesPerSecond: measured.length / ((lastAnswer - started) / 1000),
        cpuMsPerPush: (cpu.user + cpu.system) / 1000 / measured.length,
        postgresCpuMsPerPush: cpuMsBetween(cpuBefore.postgres, cpuAfter.postgres) / measured.length,
        redisCpuMsPerPush: cpuMsBetween(cpuBefore.redis, cpuAfter.redis) / measured.length,
        hostBusyFraction: meanOf(inService.map((figures) => figures.busyFraction)),
        hostMeanInService: meanOf(inService.map((figures) => figures.meanInService)),
        oddHostMostAtOnce,
        oddHostRequests,
        requestsPerPush: requests / measured.length,
        loadBefore,
        loadAfter,
      };
    };

    const cpuLine = (r: RunResult) =>
      `${round(r.cpuMsPerPush, 2)} ms CPU per push (Postgres ${round(r.postgresCpuMsPerPush, 2)}, ` +
      `Redis ${round(r.redisCpuMsPerPush, 2)}), hosts busy ${round(r.hostBusyFraction, 2)} with ` +
      `${round(r.hostMeanInService, 2)} in service`;
    const base = await measure('commits', snapshotWith(slots.filter((_, i) => i !== 1)), undefined);
    console.log(
      `caldav-hosts: ${count} changes over ${hostCount} hosts: p95 ${round(base.allP95Ms, 0)} ms, ` +
        `${round(base.pushesPerSecond, 1)} pushes/s, ${cpuLine(base)}, ` +
        `${round(base.requestsPerPush, 2)} requests per push`,
    );
    const waiting = await measure(
      'waiting',
      snapshotWith(slots.filter((_, i) => i !== 1 && i !== 5)),
      undefined,
      true,
    );
    console.log(
      `caldav-hosts: ${count} pushes waiting: ${round(waiting.pushesPerSecond, 1)} pushes/s, ${cpuLine(waiting)}`,
    );
    const slow = await measure('slow-host', snapshotWith(slots.filter((_, i) => i !== 1 && i !== 3)), {
      delayMs: SLOW_MS,
    });
    console.log(
      `caldav-hosts: one host at ${SLOW_MS} ms: others' p95 ${round(slow.otherP95Ms, 0)} ms ` +
        `(${round(slow.otherP95Ms / base.otherP95Ms, 2)}x), the slow host had at most ${slow.oddHostMostAtOnce} at once`,
    );
    const limited = await measure('429-host', snapshotWith(slots.filter((_, i) => i !== 3)), {
      delayMs: DELAY_MS,
      retryAfterSeconds: RETRY_AFTER_S,
    });
    console.log(
      `caldav-hosts: one host 429 Retry-After ${RETRY_AFTER_S}: others' p95 ${round(limited.otherP95Ms, 0)} ms ` +
        `(${round(limited.otherP95Ms / base.otherP95Ms, 2)}x), it had at most ${limited.oddHostMostAtOnce} at once, ` +
        `${limited.oddHostRequests} requests`,
    );
    const hostConcurrency = h.sync.config.caldav.hostConcurrency;
    const inputs = {
      hosts: `${hostCount} minimal CalDAV endpoints of the bench's own on loopback ports, each answering after ${DELAY_MS} ms`,
      destinations: count,
      eventsPerFeed: BLOCKS,
      change:
        'one slot booked per feed: one event rewritten under If-Match (one removed and one made, run 3)',
      commitsAtOnce: COMMITS_AT_ONCE,
      caldavConcurrency: h.sync.config.caldav.concurrency,
      hostConcurrency,
      hostRatePerSecond: h.sync.config.caldav.hostRatePerSecond,
      dispatchIntervalMs: h.sync.config.caldav.dispatchIntervalMs,
      cpu:
        'process.cpuUsage of the bench process: worker role, polls and the 20 endpoints, and the commits but in ' +
        'the run with every push waiting; Postgres: the bench database’s backends; Redis: a redis-server of its own',
      setupSeconds: round(setupSeconds, 1),
    };
    const ratioOf = (r: RunResult) => r.otherP95Ms / base.otherP95Ms;
    return [
      {
        benchmark: `CalDAV push ceiling, ${hostCount} hosts at ${DELAY_MS} ms`,
        inputs: { ...inputs, loadAverage1mBefore: base.loadBefore, loadAverage1mAfter: base.loadAfter },
        figures: {
          p50LagMs: round(base.otherP50Ms, 0),
          p95LagMs: round(base.allP95Ms, 0),
          pushesPerSecond: round(base.pushesPerSecond, 1),
          cpuMsPerPushWithCommits: round(base.cpuMsPerPush, 2),
          postgresCpuMsPerPushWithCommits: round(base.postgresCpuMsPerPush, 2),
          redisCpuMsPerPush: round(base.redisCpuMsPerPush, 2),
          hostBusyFraction: round(base.hostBusyFraction, 2),
          hostRequestsInService: round(base.hostMeanInService, 2),
          requestsPerPush: round(base.requestsPerPush, 2),
          waitingPushesPerSecond: round(waiting.pushesPerSecond, 1),
          waitingCpuMsPerPush: round(waiting.cpuMsPerPush, 2),
          waitingPostgresCpuMsPerPush: round(waiting.postgresCpuMsPerPush, 2),
          waitingRedisCpuMsPerPush: round(waiting.redisCpuMsPerPush, 2),
          waitingHostBusyFraction: round(waiting.hostBusyFraction, 2),
          waitingHostRequestsInService: round(waiting.hostMeanInService, 2),
        },
        targets: {
          'p95 commit to answer under 5 s': { target: '< 5000 ms', met: base.allP95Ms < TARGET_P95_MS },
          'CPU per push, every push waiting (bench process)': {
            target: `<= ${TARGET_CPU_MS_PER_PUSH} ms`,
            met: waiting.cpuMsPerPush <= TARGET_CPU_MS_PER_PUSH,
          },
        },
      },
      ...(
        [
          [`one host answering after ${SLOW_MS} ms`, slow],
          [`one host answering 429, Retry-After ${RETRY_AFTER_S}`, limited],
        ] as const
      ).map(([what, r]) => ({
        benchmark: `CalDAV push fairness: ${what}`,
        inputs: { ...inputs, loadAverage1mBefore: r.loadBefore, loadAverage1mAfter: r.loadAfter },
        figures: {
          otherHostsP50LagMs: round(r.otherP50Ms, 0),
          otherHostsP95LagMs: round(r.otherP95Ms, 0),
          otherHostsP95WithoutItMs: round(base.otherP95Ms, 0),
          otherHostsP95Ratio: round(ratioOf(r), 2),
          oddHostMostAtOnce: r.oddHostMostAtOnce,
          oddHostRequests: r.oddHostRequests,
          otherHostsPushesPerSecond: round(r.pushesPerSecond, 1),
          otherHostsBusyFraction: round(r.hostBusyFraction, 2),
          otherHostsRequestsInService: round(r.hostMeanInService, 2),
        },
        targets: {
          "other hosts' p95 within 1.5x of the run without it": {
            target: `<= ${TARGET_FAIRNESS}`,
            met: ratioOf(r) <= TARGET_FAIRNESS,
          },
          'the odd host never had more than CALDAV_HOST_CONCURRENCY at once': {
            target: `<= ${hostConcurrency}`,
            met: r.oddHostMostAtOnce <= hostConcurrency,
          },
        },
      })),
    ];
  } finally {
    await h.close();
    for (const host of hosts) await host.close();
    await redisServer.stop();
  }
}
