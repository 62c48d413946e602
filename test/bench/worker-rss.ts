// Benchmark (issue 42, 4): does a worker stay flat? One real `slotfeed worker` process from the build, with the
// runtime image's memory settings, syncs 1,000 then up to 100,000 small connections (1 event type, a 2-day
// horizon, the simulator without latency, its clock standing still) one after the other, and at 1k, 10k, 50k
// and 100k synced its resident memory is read from /proc, before and after a full garbage collection (asked for
// through the inspector, so the worker needs nothing of its own for it). Redis is a private redis-server, so its
// INFO memory is this installation's alone: its growth over the idle baseline, per connection, with BullMQ's
// retention of completed jobs as slotfeed sets it, and which keys hold it. The connections are made in bulk:
// each through the simulator's real OAuth flow, their rows written a thousand at a time. Figures are reported;
// nothing but correctness is asserted.
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { createRedisConnection, type RedisClient } from '../../src/lib/redis-connection.js';
import { findExecutable, startRedisServer } from '../../src/demo/redis-server-process.js';
import { createTokenVault, vaultKeyFromBase64 } from '../../src/store/token-vault.js';
import { enqueueBandSyncs, syncJobOptions } from '../../src/sync/queues.js';
import { createOAuthClient, type TokenSet } from '../../src/upstream/index.js';
import { spawnSlotfeed, type SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { check, type BenchSection } from './bench-result.js';
import { inspectorAddressIn, openInspectorSession, type InspectorSession } from './inspector-session.js';
import { cpuMsOf, loadAverage, memoryMibOf, round } from './process-stats.js';
import { runtimeImageMemorySettings } from './runtime-memory.js';

export interface WorkerRssOptions {
  /** Connections synced in all (the last checkpoint). */
  connections: number;
  /** Synced-connection counts at which memory is read; clipped to `connections`, which is always one. */
  checkpoints: number[];
  /**
   * Minutes of syncing allowed (a busy machine may not get through 100,000): once spent, the jobs still waiting
   * are dropped, the running ones finish, and the last sample is taken at however many were synced.
   */
  budgetMinutes: number;
}

const EVENT_TYPES_PER_CONNECTION = 1;
const HORIZON_DAYS = 2;
const RSS_RATIO_TARGET = 1.2;
/** How many finished sync jobs BullMQ keeps (slotfeed's removeOnComplete): past it they stop adding to Redis. */
const RETAINED_COMPLETED_JOBS = (syncJobOptions(randomUUID(), 1).removeOnComplete as { count: number }).count;
const CONNECT_CONCURRENCY = 32;
const ROWS_PER_INSERT = 1000;
const JOBS_PER_ENQUEUE = 5000;
/** Far beyond the run: slotfeed never refreshes a token mid-bench (the simulator's clock stands still anyway). */
const ACCESS_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

interface MemorySample {
  synced: number;
  rssMiB: number;
  rssMiBAfterGc: number;
  anonMiBAfterGc: number;
  heapUsedMiB: number;
  externalMiB: number;
  redisUsedBytes: number;
  wallSeconds: number;
  workerCpuSeconds: number;
}

/** Each simulated user through the real authorization-code flow; their connection rows written in bulk. */
async function connectInBulk(h: SyncHarness): Promise<string[]> {
  const oauth = createOAuthClient({
    authUrl: h.sim.authUrl,
    clientId: h.sim.clientId,
    clientSecret: h.sim.clientSecret,
    redirectUri: h.env.CALENDBOOK_REDIRECT_URI!,
    timeoutMs: 30_000,
  });
  const vault = createTokenVault(vaultKeyFromBase64(h.env.TOKEN_ENCRYPTION_KEY!));
  const grant = async (email: string): Promise<TokenSet> => {
    const request = oauth.buildAuthorizationRequest({ loginHint: email });
    const response = await fetch(request.url, { redirect: 'manual' });
    const code = new URL(response.headers.get('location') ?? '').searchParams.get('code');
    check(code !== null, `no authorization code for ${email}`);
    return oauth.exchangeCode(code, request.codeVerifier);
  };
  const limit = pLimit(CONNECT_CONCURRENCY);
  const ids: string[] = [];
  for (let start = 0; start < h.sim.users.length; start += ROWS_PER_INSERT) {
    const users = h.sim.users.slice(start, start + ROWS_PER_INSERT);
    const tokens = await Promise.all(users.map((u) => limit(() => grant(u.email))));
    const values: unknown[] = [];
    const rows = users.map((u, i) => {
      const id = randomUUID();
      ids.push(id);
      const t = tokens[i]!;
      values.push(
        id,
        t.subject ?? u.email,
        u.email,
        vault.seal(t.accessToken, id),
        vault.seal(t.refreshToken, id),
        t.expiresAt,
        t.scope ?? null,
      );
      const at = i * 7;
      return `($${at + 1}::uuid, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6}, $${at + 7})`;
    });
    await h.db.sql.query(
      `INSERT INTO connection (id, upstream_user_id, email, access_token_sealed, refresh_token_sealed,
         access_expires_at, scope) VALUES ${rows.join(', ')}`,
      values,
    );
  }
  return ids;
}

async function startWorker(
  h: SyncHarness,
): Promise<{ worker: SlotfeedProcess; inspector: InspectorSession }> {
  const runtime = runtimeImageMemorySettings();
  const env: Record<string, string> = {
    ...h.env,
    MALLOC_ARENA_MAX: runtime.MALLOC_ARENA_MAX,
    // The inspector on a port of the system's choosing: the bench asks for garbage collections through it.
    NODE_OPTIONS: `${runtime.NODE_OPTIONS} --inspect=127.0.0.1:0 ${process.env.BENCH_WORKER_NODE_OPTIONS ?? ''}`,
    LOG_LEVEL: 'warn',
    SYNC_HORIZON_DAYS: String(HORIZON_DAYS),
  };
  // The worker runs with slotfeed's defaults, not the tests' short locks and backoffs.
  delete env.WORKER_LOCK_SECONDS;
  delete env.SYNC_BACKOFF_MS;
  delete env.SHUTDOWN_GRACE_SECONDS;
  const worker = spawnSlotfeed(['worker'], env, { from: 'build' });
  // At LOG_LEVEL warn it says nothing once running: it is ready when its sync worker is connected to the queue.
  await waitFor(
    async () => (worker.child.exitCode === null ? h.clients.syncQueue.getWorkersCount() : -1),
    (count) => count !== 0,
    { timeoutMs: 60_000, what: 'the worker process to start' },
  );
  const address = inspectorAddressIn(worker.output());
  check(worker.child.exitCode === null && address !== undefined, `worker did not start: ${worker.output()}`);
  return { worker, inspector: await openInspectorSession(address) };
}

async function redisUsedBytes(redis: RedisClient): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? NaN);
}

/**
 * Bytes by key shape (the prefix cut, ids and numbers as `*`), largest first: what the memory is spent on. MEMORY
 * USAGE samples every element (SAMPLES 0), so a sorted set of 10,000 completed jobs is counted whole.
 */
async function redisBytesByKeyShape(redis: RedisClient, prefix: string): Promise<[string, number, number][]> {
  const shapes = new Map<string, { bytes: number; keys: number }>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 2000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', 0);
    const usage = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const shape = key
        .replace(prefix, '<prefix>')
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
        .replace(/\b\d+\b/g, '<n>');
      const entry = shapes.get(shape) ?? { bytes: 0, keys: 0 };
      entry.bytes += Number(usage[i]?.[1] ?? 0);
      entry.keys += 1;
      shapes.set(shape, entry);
    });
  } while (cursor !== '0');
  return [...shapes.entries()]
    .map(([shape, { bytes, keys }]): [string, number, number] => [shape, bytes, keys])
    .sort((a, b) => b[1] - a[1]);
}

async function syncedCount(h: SyncHarness): Promise<{ succeeded: number; failed: number }> {
  const { rows } = await h.db.sql.query<{ succeeded: string; failed: string }>(
    `SELECT count(*) FILTER (WHERE last_sync_outcome = 'succeeded') AS succeeded,
            count(*) FILTER (WHERE last_sync_outcome = 'failed') AS failed FROM connection`,
  );
  return { succeeded: Number(rows[0]!.succeeded), failed: Number(rows[0]!.failed) };
}

const mib = (bytes: number) => bytes / 2 ** 20;

export async function benchWorkerRss(options: WorkerRssOptions): Promise<BenchSection[]> {
  const { connections } = options;
  const checkpoints = [...new Set([...options.checkpoints.filter((n) => n < connections), connections])].sort(
    (a, b) => a - b,
  );
  const executable = findExecutable('redis-server', process.env.PATH);
  check(executable !== null, 'worker-rss needs a redis-server on PATH (its own, to read INFO memory alone)');
  const redisServer = await startRedisServer({ executable });
  const simNow = new Date();
  const setupStarted = performance.now();
  let h: SyncHarness | undefined;
  let worker: SlotfeedProcess | undefined;
  let inspector: InspectorSession | undefined;
  const redis = createRedisConnection(redisServer.url, 'command', 'bench-worker-rss');
  try {
    h = await createSyncHarness('bench_worker_rss', {
      clock: null,
      redisUrl: redisServer.url,
      simulator: {
        users: connections,
        seed: 42,
        eventTypesPerUser: EVENT_TYPES_PER_CONNECTION,
        now: () => simNow,
        accessTokenTtlSeconds: ACCESS_TOKEN_TTL_SECONDS,
      },
    });
    const ids = await connectInBulk(h);
    const setupSeconds = (performance.now() - setupStarted) / 1000;
    console.log(`worker-rss: ${connections} connections made in ${round(setupSeconds, 0)} s`);

    ({ worker, inspector } = await startWorker(h));
    const pid = worker.child.pid ?? 0;
    const idleRss = memoryMibOf(pid).rss;
    await inspector.collectGarbage();
    const idleRssAfterGc = memoryMibOf(pid).rss;
    const redisIdleBytes = await redisUsedBytes(redis);

    const samples: MemorySample[] = [];
    const started = performance.now();
    const cpuAtStart = cpuMsOf(pid);
    let enqueued = 0;
    let shapesAtEnd: [string, number, number][] = [];
    for (const checkpoint of checkpoints) {
      for (let start = enqueued; start < checkpoint; start += JOBS_PER_ENQUEUE) {
        const picks = ids.slice(start, Math.min(start + JOBS_PER_ENQUEUE, checkpoint));
        await enqueueBandSyncs(
          h.clients.syncQueue,
          picks.map((connectionId) => ({ connectionId })),
          3,
          `rss-${start}`,
        );
      }
      enqueued = checkpoint;
      const deadline = started + options.budgetMinutes * 60_000;
      let done = await waitFor(
        () => syncedCount(h!),
        (n) =>
          n.succeeded + n.failed >= checkpoint ||
          worker!.child.exitCode !== null ||
          performance.now() > deadline,
        { timeoutMs: 6 * 3_600_000, intervalMs: 1000, what: `${checkpoint} syncs` },
      );
      check(worker.child.exitCode === null, `the worker exited: ${worker.output().slice(-2000)}`);
      const outOfTime = done.succeeded + done.failed < checkpoint;
      if (outOfTime) {
        await h.clients.syncQueue.drain();
        await waitFor(
          () => h!.clients.syncQueue.getJobCounts('active'),
          (c) => (c.active ?? 0) === 0,
          { timeoutMs: 120_000, what: 'the running syncs to finish' },
        );
        done = await syncedCount(h);
        console.log(`worker-rss: out of time (${options.budgetMinutes} min) at ${done.succeeded} synced`);
      }
      check(done.failed === 0, `${done.failed} syncs failed`);
      // The last jobs' completion is written to Redis just after their commit: wait until none is left.
      await waitFor(
        () => h!.clients.syncQueue.getJobCounts('active', 'waiting', 'prioritized'),
        (c) => (c.active ?? 0) + (c.waiting ?? 0) + (c.prioritized ?? 0) === 0,
        { timeoutMs: 60_000, what: 'the queue to drain' },
      );
      const rssMiB = memoryMibOf(pid).rss;
      await inspector.collectGarbage();
      const afterGc = memoryMibOf(pid);
      const heap = await inspector.evaluate<{ heapUsed: number; external: number }>(
        'JSON.stringify(process.memoryUsage())',
      );
      const sample: MemorySample = {
        synced: done.succeeded,
        rssMiB,
        rssMiBAfterGc: afterGc.rss,
        anonMiBAfterGc: afterGc.anon,
        heapUsedMiB: mib(heap.heapUsed),
        externalMiB: mib(heap.external),
        redisUsedBytes: await redisUsedBytes(redis),
        wallSeconds: (performance.now() - started) / 1000,
        workerCpuSeconds: (cpuMsOf(pid) - cpuAtStart) / 1000,
      };
      samples.push(sample);
      console.log(
        `worker-rss: ${sample.synced} synced at ${round(sample.wallSeconds, 0)} s: RSS ${round(rssMiB, 1)} MiB ` +
          `(${round(afterGc.rss, 1)} after GC, heap ${round(sample.heapUsedMiB, 1)}), Redis ` +
          `${round(mib(sample.redisUsedBytes), 1)} MiB, load ${loadAverage()}`,
      );
      if (checkpoint === connections || outOfTime) {
        shapesAtEnd = await redisBytesByKeyShape(redis, h.redis.prefix);
        break;
      }
    }

    const first = samples[0]!;
    const last = samples[samples.length - 1]!;
    const ratio = last.rssMiBAfterGc / first.rssMiBAfterGc;
    const redisBytesPerConnection = (last.redisUsedBytes - redisIdleBytes) / last.synced;
    // Past the 10,000 finished jobs BullMQ keeps, what one more synced connection adds at rest.
    const beyondRetention = samples.filter((s) => s.synced >= RETAINED_COMPLETED_JOBS);
    const marginal =
      beyondRetention.length >= 2
        ? (last.redisUsedBytes - beyondRetention[0]!.redisUsedBytes) /
          (last.synced - beyondRetention[0]!.synced)
        : null;
    const keyBytes = shapesAtEnd.reduce((sum, [, bytes]) => sum + bytes, 0);
    const per = (n: number) => `${round(n, 0)}`;
    return [
      {
        benchmark: 'worker memory to 100,000 connections',
        inputs: {
          connections,
          eventTypesPerConnection: EVENT_TYPES_PER_CONNECTION,
          horizonDays: HORIZON_DAYS,
          simulatorLatencyMs: 0,
          workerProcesses: 1,
          workerMemorySettings: `MALLOC_ARENA_MAX=${runtimeImageMemorySettings().MALLOC_ARENA_MAX} ${runtimeImageMemorySettings().NODE_OPTIONS}`,
          checkpoints: checkpoints.join(', '),
          budgetMinutes: options.budgetMinutes,
          redis: 'a private redis-server',
        },
        figures: {
          rssMiBIdle: round(idleRss, 1),
          rssMiBIdleAfterGc: round(idleRssAfterGc, 1),
          rssMiBAt1k: round(first.rssMiBAfterGc, 1),
          // At the last sample: 100,000 in a full run; connectionsSynced says how many a shorter one reached.
          rssMiBAt100k: round(last.rssMiBAfterGc, 1),
          connectionsSynced: last.synced,
          rssRatio100kTo1k: round(ratio, 3),
          rssMiBBeforeGcBySynced: samples.map((s) => `${s.synced}: ${round(s.rssMiB, 1)}`).join(', '),
          rssMiBAfterGcBySynced: samples.map((s) => `${s.synced}: ${round(s.rssMiBAfterGc, 1)}`).join(', '),
          privateRssMiBAfterGcBySynced: samples
            .map((s) => `${s.synced}: ${round(s.anonMiBAfterGc, 1)}`)
            .join(', '),
          heapUsedMiBBySynced: samples.map((s) => `${s.synced}: ${round(s.heapUsedMiB, 1)}`).join(', '),
          externalMiBBySynced: samples.map((s) => `${s.synced}: ${round(s.externalMiB, 1)}`).join(', '),
          workerPeakRssMiB: round(memoryMibOf(pid).peak, 1),
          syncsPerSecond: round(last.synced / last.wallSeconds, 1),
          workerCpuMsPerSync: round((last.workerCpuSeconds * 1000) / last.synced, 2),
          wallSeconds: round(last.wallSeconds, 0),
          setupSeconds: round(setupSeconds, 0),
          loadAverage1mAtEnd: loadAverage(),
        },
        targets: {
          rssRatio100kTo1k: { target: `≤ ${RSS_RATIO_TARGET}`, met: ratio <= RSS_RATIO_TARGET },
        },
      },
      {
        benchmark: 'Redis memory per connection',
        inputs: {
          connections,
          completedJobRetention: 'removeOnComplete { age: 24 h, count: 10,000 } (slotfeed’s)',
        },
        figures: {
          redisUsedBytesIdle: redisIdleBytes,
          redisUsedBytesBySynced: samples.map((s) => `${s.synced}: ${s.redisUsedBytes}`).join(', '),
          redisBytesPerConnectionBySynced: samples
            .map((s) => `${s.synced}: ${per((s.redisUsedBytes - redisIdleBytes) / s.synced)}`)
            .join(', '),
          redisBytesPerConnection: round(redisBytesPerConnection, 0),
          redisMarginalBytesPerConnection: marginal === null ? null : round(marginal, 0),
          redisKeyBytesAtEnd: keyBytes,
          redisTopKeyShapes: shapesAtEnd
            .slice(0, 6)
            .map(([shape, bytes, keys]) => `${shape} ×${keys}: ${round(mib(bytes), 2)} MiB`)
            .join('; '),
        },
      },
    ];
  } finally {
    inspector?.close();
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await redis.quit().catch(() => undefined);
    await h?.close();
    await redisServer.stop();
  }
}
