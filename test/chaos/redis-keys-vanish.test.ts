// Fault: every key slotfeed holds in Redis vanishes while it runs, without a reconnect (a FLUSHDB, an eviction
// under a wrong maxmemory-policy, a failover to an empty replica). Before: the tick's job scheduler lives in
// Redis, so nothing ticked again: 0 syncs in 150 s, /readyz and /healthz 200, nothing logged. Now the
// scheduler's watchdog notices at its next look (one tick interval, on the scheduler's injected clock, so the
// test moves it instead of waiting), puts the tick back and says so once; until then readiness says no tick
// can fire. The same when only the next tick job is gone and the job scheduler stays (the watchdog and
// readiness looked at the scheduler alone: no tick, /readyz 200). The three roles run in one process, as
// `slotfeed start` runs them, on a Redis of the test's own.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RedisClient } from '../../src/lib/redis-connection.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { TICK_SCHEDULER_ID } from '../../src/sync/scheduler.js';
import { messageIdOf } from '../../src/webhooks/webhook-delivery.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { ADMIN_TOKEN, rawRequest } from '../support/web-harness.js';
import { freePort, startOwnRedis, type OwnRedis } from './chaos-support.js';
import { patient } from '../support/patience.js';

const TICK_SECONDS = 1;
const clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));
const logLines: string[] = [];
let redis: OwnRedis;
let flusher: RedisClient;
let h: SyncHarness;
let receiver: WebhookReceiver;
let connectionId: string;
let webUrl: string;

beforeAll(async () => {
  redis = await startOwnRedis();
  flusher = createRedisConnection(redis.url, 'command', 'test-flusher');
  receiver = await startWebhookReceiver();
  const port = await freePort();
  webUrl = `http://127.0.0.1:${port}`;
  h = await createSyncHarness('chaos_redis_keys_vanish', {
    clock,
    logLines,
    simulator: { users: 1 },
    env: {
      REDIS_URL: redis.url,
      SYNC_TICK_SECONDS: String(TICK_SECONDS),
      WEB_HOST: '127.0.0.1',
      WEB_PORT: String(port),
      PUBLIC_BASE_URL: webUrl,
      ADMIN_TOKEN,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_DISPATCH_INTERVAL_MS: '100',
      // A failed delivery waits ten minutes for its retry: it is still waiting when the keys vanish.
      WEBHOOK_RETRY_BASE_MS: '600000',
    },
  });
  connectionId = await h.connect(h.sim.users[0]!.email);
  const made = await h.stores.webhooks.create({ owner: { connectionId }, url: receiver.url });
  receiver.setSecret(made.secret);
  await h.startRoles(['scheduler', 'worker', 'web']);
}, patient(60_000));

afterAll(async () => {
  await h?.close();
  await receiver?.close();
  await flusher?.quit();
  await redis?.stop();
});

const succeededRuns = () => h.clients.prisma.syncRun.count({ where: { connectionId, outcome: 'succeeded' } });
const readiness = async (path: string) => {
  const response = await rawRequest('GET', `${webUrl}${path}`, {});
  return { status: response.status, body: JSON.parse(response.text) as Record<string, unknown> };
};
/**
 * Makes the connection due now (as a reconnect or an operator does), moves the scheduler's clock one tick
 * interval and waits for the watchdog's look it fired; returns the successful runs counted before.
 */
async function dueNowThenOneTickInterval(): Promise<number> {
  await h.clients.prisma.connection.update({
    where: { id: connectionId },
    data: { nextSyncAt: clock.now() },
  });
  const before = await succeededRuns();
  clock.advance(TICK_SECONDS);
  await clock.timersSettled();
  return before;
}
const tickRestoredLines = () => logLines.filter((line) => line.includes('tick was missing from Redis'));

let pendingDeliveryId: string;

describe('every Redis key deleted under running scheduler, worker and web roles', () => {
  it(
    'ticks again within one tick interval, and readiness is not 200 while no tick can fire',
    async () => {
      await waitFor(succeededRuns, (n) => n >= 1, { timeoutMs: 60_000, what: 'the first scheduled sync' });
      expect((await readiness('/readyz')).status).toBe(200);

      // A booking whose webhooks fail once and wait out their retry.
      receiver.failNext(Infinity);
      const slot = await h.clients.prisma.slot.findFirstOrThrow({
        where: {
          connectionId,
          goneAt: null,
          startsAt: { gt: new Date(clock.now().getTime() + 2 * 3600_000) },
        },
        orderBy: [{ startsAt: 'asc' }, { upstreamEventId: 'asc' }],
      });
      h.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
      clock.advance(10 * 60); // the near band is due: the next tick syncs it
      const failed = await waitFor(
        () =>
          h.clients.prisma.webhookDelivery.findMany({
            where: { eventType: 'booking.inferred', lastStatus: 500 },
          }),
        (rows) => rows.length === 1,
        { timeoutMs: 30_000, what: 'a failed booking.inferred delivery' },
      );
      pendingDeliveryId = failed[0]!.id;
      await waitFor(
        async () => (await h.clients.webhookQueue.getJob(pendingDeliveryId))?.getState(),
        (state) => state === 'delayed',
        { what: 'the delivery waiting out its retry' },
      );

      // The receiver works again before the keys go: the sweep hands the delivery over again as soon as it
      // notices, which on a loaded machine can be before the checks below are done.
      receiver.failNext(0);
      await flusher.flushdb();

      // Nothing can tick now: readiness says so (the process still answers: /healthz is liveness).
      const gone = await readiness('/readyz');
      expect(gone.status).toBe(503);
      expect(gone.body).toMatchObject({ roles: { scheduler: 'not ready' }, tick: 'missing' });
      expect((await readiness('/readyz/scheduler')).status).toBe(503);
      expect(tickRestoredLines()).toEqual([]);

      // Due again (as a reconnect or an operator makes it), then one tick interval on the scheduler's clock.
      const before = await dueNowThenOneTickInterval();
      await waitFor(succeededRuns, (n) => n > before, {
        timeoutMs: 30_000,
        what: 'a sync after the keys vanished',
      });
      await waitFor(
        () => readiness('/readyz').then((r) => r.status),
        (status) => status === 200,
        { what: 'ready again' },
      );
      // Said once, as a warning.
      expect(tickRestoredLines()).toHaveLength(1);
      expect(JSON.parse(tickRestoredLines()[0]!)).toMatchObject({ level: 40 });
      // A later look finds it there and says nothing more: once that look is over.
      clock.advance(TICK_SECONDS);
      await clock.timersSettled();
      expect(tickRestoredLines()).toHaveLength(1);
    },
    patient(120_000),
  );

  it(
    'still delivers the webhook whose queued retry vanished with the keys',
    async () => {
      await waitFor(
        async () =>
          receiver.requests.filter((r) => r.id === messageIdOf(pendingDeliveryId) && r.status < 300).length,
        (delivered) => delivered === 1,
        { timeoutMs: 30_000, what: 'the pending webhook delivered' },
      );
      const row = await h.clients.prisma.webhookDelivery.findUniqueOrThrow({
        where: { id: pendingDeliveryId },
      });
      expect(row.deliveredAt).not.toBeNull();
    },
    patient(60_000),
  );
});

// Only the job the tick's scheduler fires next, or only its place in the delayed set (the set evicted while
// the job's hash stayed): the scheduler's own keys are there, yet no tick fires. In one script, so no tick
// can run in between; 0 when that job is not waiting in the delayed set just then (a tick runs: try again).
const DELETE_NEXT_TICK = `
local next = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not next then return 0 end
local jobId = 'repeat:' .. ARGV[1] .. ':' .. next
if not redis.call('ZSCORE', KEYS[2], jobId) then return 0 end
redis.call('ZREM', KEYS[2], jobId)
if ARGV[3] == 'job' then redis.call('DEL', ARGV[2] .. jobId) end
return 1`;

describe.each([
  ['the job of the next tick', 'job'],
  ["the next tick's place in the delayed set", 'delayed-entry'],
])('only %s deleted, the job scheduler left', (_what, mode) => {
  it(
    'ticks again within one tick interval, and readiness is 503 until then',
    async () => {
      const tickQueue = h.clients.tickQueue;
      const warned = tickRestoredLines().length;
      await waitFor(
        () =>
          flusher.eval(
            DELETE_NEXT_TICK,
            2,
            tickQueue.toKey('repeat'),
            tickQueue.toKey('delayed'),
            TICK_SCHEDULER_ID,
            tickQueue.toKey(''),
            mode,
          ),
        (deleted) => deleted === 1,
        { intervalMs: 20, what: 'the next tick deleted while it waits' },
      );
      expect(await tickQueue.getJobScheduler(TICK_SCHEDULER_ID)).toBeDefined();

      const gone = await readiness('/readyz/scheduler');
      expect(gone.status).toBe(503);
      expect(gone.body).toMatchObject({ tick: 'missing' });

      const before = await dueNowThenOneTickInterval();
      expect(tickRestoredLines()).toHaveLength(warned + 1);
      await waitFor(succeededRuns, (n) => n > before, {
        timeoutMs: 30_000,
        what: 'a sync after the next tick vanished',
      });
      expect((await readiness('/readyz/scheduler')).status).toBe(200);
    },
    patient(60_000),
  );
});
