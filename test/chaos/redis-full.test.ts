// Fault: Redis full. A redis-server of the test's own under `maxmemory-policy noeviction` (as BullMQ requires)
// is filled past its maxmemory while a `slotfeed start` process (scheduler, worker, web) runs against it with
// a tick every second, then given its memory back. Before: the tick worker re-ran its refused script in a
// tight loop, ~3,500 OOM replies a second, each printed as a multi-line console.error (3 MB/s, 60 % of a core).
// Now each worker backs off (1 s, doubling), the log gets a few JSON lines, /connect answers 503 at once, feeds
// are served, and once Redis has memory again the scheduler ticks and a due connection is synced.
// The refusals are counted by Redis itself (INFO errorstats); the span lasts until the tick worker has been
// refused REFUSALS times (its slotfeed_errors_total), not for a fixed time.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { killProcesses, spawnSlotfeed, type SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { ADMIN_TOKEN, rawRequest } from '../support/web-harness.js';
import { freePort, startOwnRedis, type OwnRedis } from './chaos-support.js';
import { patient } from '../support/patience.js';

/** Refusals of the tick worker to wait for: with pauses of 1, 2, 4 and 8 s, some 15 s of a full Redis. */
const REFUSALS = 5;
const FAST_MS = 2000;

let redis: OwnRedis;
let admin: Redis;
let h: SyncHarness;
let connectionId: string;
let feedToken: string;
let daemon: SlotfeedProcess;
let webUrl: string;

beforeAll(async () => {
  redis = await startOwnRedis();
  admin = new Redis(redis.url, { protocol: 2, maxRetriesPerRequest: 1 });
  admin.on('error', () => undefined);
  await admin.config('SET', 'maxmemory-policy', 'noeviction');
  h = await createSyncHarness('chaos_redis_full', {
    clock: null,
    simulator: { users: 1 },
    env: { REDIS_URL: redis.url, SYNC_TICK_SECONDS: '1', SYNC_HORIZON_DAYS: '7' },
  });
  connectionId = await h.connect(h.sim.users[0]!.email);
  feedToken = (await h.stores.feeds.ensureDefaultFeed(connectionId)).token!;
  const port = await freePort();
  webUrl = `http://127.0.0.1:${port}`;
  daemon = spawnSlotfeed(['start'], {
    ...h.env,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    WEB_PORT: String(port),
    PUBLIC_BASE_URL: webUrl,
    ADMIN_TOKEN,
  });
  await waitFor(
    async () => daemon.output(),
    (out) => out.includes('slotfeed running') || daemon.child.exitCode !== null,
    { timeoutMs: 60_000, what: 'slotfeed start' },
  );
  if (daemon.child.exitCode !== null) throw new Error(`slotfeed start exited:\n${daemon.output()}`);
}, patient(120_000));

afterAll(async () => {
  if (daemon) await killProcesses([daemon]);
  admin?.disconnect();
  await h?.close();
  await redis?.stop();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  rawRequest('GET', `${webUrl}${path}`, { headers });
const succeededRuns = () => h.clients.prisma.syncRun.count({ where: { connectionId, outcome: 'succeeded' } });

async function oomReplies(): Promise<number> {
  const match = /errorstat_OOM:count=(\d+)/.exec(await admin.info('errorstats'));
  return match ? Number(match[1]) : 0;
}

async function errorCount(source: string): Promise<number> {
  const text = (await get('/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`slotfeed_errors_total{source="${source}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** Fills Redis with keys of its own, then sets maxmemory well below what is used: every write is refused. */
async function fillRedis(): Promise<void> {
  const value = 'x'.repeat(10_000);
  for (let i = 0; i < 300; i++) await admin.set(`filler:${i}`, value);
  const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
  await admin.config('SET', 'maxmemory', String(used - 2_000_000));
  await expect(admin.set('filler:probe', 'x')).rejects.toThrow(/OOM/);
}

function linesSince(offset: number): string[] {
  return daemon
    .output()
    .slice(offset)
    .split('\n')
    .filter((line) => line.length > 0);
}

describe('Redis full under a running slotfeed', () => {
  it('syncs while Redis has room', async () => {
    await waitFor(succeededRuns, (n) => n >= 1, { timeoutMs: 60_000, what: 'the first scheduled sync' });
    expect((await get(`/feeds/${feedToken}.ics`)).status).toBe(200);
  });

  it(
    'while Redis refuses writes: no tight loop, a few JSON lines, /connect 503 at once, feeds served',
    async () => {
      const offset = daemon.output().length;
      const refusedBefore = await oomReplies();
      const tickErrorsBefore = await errorCount('tick worker');
      const started = performance.now();
      await fillRedis();
      // Due again: the tick has work to enqueue, and cannot.
      await h.clients.prisma.connection.update({
        where: { id: connectionId },
        data: { nextSyncAt: new Date(0) },
      });

      // Queuing a sync is refused by Redis (OOM): a 503 page at once, not a 500.
      const actionStarted = performance.now();
      const action = await rawRequest('POST', `${webUrl}/admin/connections/${connectionId}/sync`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'text/html' },
      });
      expect(action.status).toBe(503);
      expect(action.text).toContain('needs Redis');
      expect(performance.now() - actionStarted).toBeLessThan(FAST_MS);
      // The OAuth state's script passes Redis's OOM check (its first write, ZREMRANGEBYSCORE, may not grow
      // memory, and Redis does not stop a script midway), so /connect still works; either way it answers fast.
      const connectStarted = performance.now();
      const connect = await get('/connect', { accept: 'text/html' });
      expect([302, 503]).toContain(connect.status);
      expect(performance.now() - connectStarted).toBeLessThan(FAST_MS);
      expect((await get(`/feeds/${feedToken}.ics`)).status).toBe(200);
      expect((await get('/readyz/feeds')).status).toBe(200);

      await waitFor(
        () => errorCount('tick worker'),
        (n) => n >= tickErrorsBefore + REFUSALS,
        { timeoutMs: 90_000, intervalMs: 250, what: `${REFUSALS} refusals of the tick worker` },
      );
      const seconds = (performance.now() - started) / 1000;
      const refused = (await oomReplies()) - refusedBefore;
      const lines = linesSince(offset);
      const parsed = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
      if (process.env.CHAOS_FIGURES) {
        console.info(
          JSON.stringify({ seconds, refused, lines: lines.length, bytes: lines.join('\n').length }),
        );
      }
      // Before: some 3,500 refused scripts a second. A worker refused 5 times backs off 1+2+4+8 s; the other
      // writers (the sync worker, /connect, the rate limits, the tick's own retries) add a few more.
      expect(refused).toBeLessThan(10 + 3 * seconds);
      expect(parsed.length).toBeLessThan(25);
      expect(parsed.some((line) => line.msg.includes("Redis refuses the tick worker's commands"))).toBe(true);
    },
    patient(120_000),
  );

  it(
    'recovers once Redis has memory again: ticks, syncs, /connect works',
    async () => {
      const offset = daemon.output().length;
      const before = await succeededRuns();
      await admin.config('SET', 'maxmemory', '0');
      await waitFor(succeededRuns, (n) => n > before, {
        timeoutMs: 60_000,
        what: 'a sync after memory was freed',
      });
      await waitFor(
        () => get('/connect').then((r) => r.status),
        (status) => status === 302,
        { timeoutMs: 30_000, what: '/connect to work again' },
      );
      await waitFor(
        async () => linesSince(offset).filter((line) => line.includes('tick worker works again')),
        (found) => found.length === 1,
        { timeoutMs: 30_000, what: 'the tick worker to say it works again' },
      );
    },
    patient(120_000),
  );
});
