// Who a scheduler tick considers, with the worker running on an injected clock. Two ways it went wrong (issue
// 26): with SYNC_HORIZON_DAYS=7 the SYNC_BANDS default then had a band (days 7+) no date of the horizon falls in; it was
// never pulled, so counted as due, and every commit set next_sync_at to now: each connection was pulled whole at
// every tick. And a connection whose job already waited in the queue (a retry in backoff, a busy pool) was still
// budgeted for: its pick was dropped at enqueue, and the round had stopped behind it, so nobody else went.
// Counting a connection as queued by its deduplication key alone then skipped, at every tick and silently, a
// connection whose job was gone but whose key stayed (BullMQ clears such a key only when a job is added).
// Each tick waits for the connections it enqueued to be synced, never for a number of runs (scheduler-ticks.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readBandState } from '../../src/sync/band-schedule.js';
import { createRedisCallBudget } from '../../src/sync/call-budget.js';
import { ACCOUNT_CALLS } from '../../src/sync/pull-plan.js';
import { SYNC_JOB, syncJobOptions } from '../../src/sync/queues.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { tickAndWaitForSyncs } from '../support/scheduler-ticks.js';

let h: SyncHarness;
let ids: string[];
const clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));

beforeAll(async () => {
  // Bands whose last starts a week ahead (the defaults before issue 30), over a week's horizon.
  h = await createSyncHarness('tick_candidates', {
    clock,
    simulator: { users: 3 },
    env: { SYNC_BANDS: '4d=10m,7d=40m,*=3h', SYNC_HORIZON_DAYS: '7' },
  });
  ids = [];
  for (const user of h.sim.users) ids.push(await h.connect(user.email));
  await h.startRoles(['worker']);
});
afterAll(async () => {
  await h?.close();
});

/** One tick at the clock's time; waits until the syncs it enqueued have committed. */
const tick = (deps = h.services.tickDeps) => tickAndWaitForSyncs(h, deps);

const connection = (id: string) => h.clients.prisma.connection.findUniqueOrThrow({ where: { id } });

describe('a band beyond the horizon', () => {
  it('does not exist for scheduling: a connection synced is next due at its nearest band, not at once', async () => {
    expect((await tick()).enqueued).toBe(3);
    for (const id of ids) {
      const row = await connection(id);
      expect(Object.keys(readBandState(row.bandState)).sort()).toEqual(['days 0-3', 'days 4-6']);
      // The near band's interval (10 minutes; the fake clock's random() gives no jitter).
      expect(row.nextSyncAt).toEqual(new Date(clock.now().getTime() + 10 * 60_000));
    }
    clock.advance(60);
    expect((await tick()).enqueued).toBe(0);
    // Every user of the bands (scheduler, worker, metrics, admin page) sees the same clipped set.
    expect(h.config.sync.bands.map((band) => band.name)).toEqual(['days 0-3', 'days 4-6']);
  });
});

describe('a connection whose sync job is already queued', () => {
  it('is not budgeted for: the calls go to the connections that can use them', async () => {
    clock.advance(10 * 60); // every connection's near band is due
    // The first connection's job waits out a backoff (its last attempt failed, so its band state did not
    // move): the longest overdue of all.
    const [queued, ...others] = ids as [string, ...string[]];
    const row = await connection(queued);
    const lateState = readBandState(row.bandState);
    lateState['days 0-3']!.dueAt = new Date(clock.now().getTime() - 5 * 60_000).toISOString();
    await h.clients.prisma.connection.update({
      where: { id: queued },
      data: { bandState: lateState, nextSyncAt: new Date(clock.now().getTime() - 5 * 60_000) },
    });
    const waiting = await h.clients.syncQueue.add(
      SYNC_JOB,
      { connectionId: queued },
      { ...syncJobOptions(queued, 3), delay: 3_600_000 },
    );

    // A bank that holds one connection's near-band pull (the dearest of them), partly spent, so it is not full
    // and cannot be overdrawn.
    const costs = await Promise.all(
      ids.map(
        async (id) => ACCOUNT_CALLS + readBandState((await connection(id)).bandState)['days 0-3']!.calls,
      ),
    );
    const bank = Math.max(...costs) + 1;
    const budget = createRedisCallBudget(h.clients.redis, `${h.config.redis.prefix}:short-budget`, bank / 30);
    await budget.spend(1, clock.now());
    const before = await h.clients.prisma.syncRun.findMany({ select: { id: true } });

    const result = await tick({ ...h.services.tickDeps, budget });
    expect(result.enqueued).toBe(1);
    // By connection: an attempt retried, or run again after its lock lapsed on a loaded machine, adds a run.
    const runs = await h.clients.prisma.syncRun.findMany({
      where: { id: { notIn: before.map((run) => run.id) } },
    });
    const synced = [...new Set(runs.map((run) => run.connectionId))];
    expect(synced).toHaveLength(1);
    expect(others).toContain(synced[0]);
    expect(runs.find((run) => run.outcome === 'succeeded')?.bands).toEqual(['days 0-3']);
    // The queued job is left as it was.
    expect(await waiting.getState()).toBe('delayed');
    await waiting.remove();
  });
});

describe('a connection whose queued job is gone but whose deduplication key stayed', () => {
  it('is synced at the next tick, not skipped as queued for good', async () => {
    clock.advance(3 * 3600); // every band of every connection is due
    // A job of it whose keys are then lost (evicted under allkeys-lru, a partial restore): BullMQ's
    // deduplication key still names it, and only an add would find it stale.
    const lost = ids[1]!;
    const job = await h.clients.syncQueue.add(
      SYNC_JOB,
      { connectionId: lost },
      { ...syncJobOptions(lost, 3), delay: 3_600_000 },
    );
    await h.clients.redis.del(h.clients.syncQueue.toKey(job.id!));
    expect(await h.clients.syncQueue.getDeduplicationJobId(`sync:${lost}`)).toBe(job.id);
    const before = await h.clients.prisma.syncRun.findMany({ select: { id: true } });

    const result = await tick();
    expect(result).toMatchObject({ queued: 0, enqueued: ids.length });
    const runs = await h.clients.prisma.syncRun.findMany({
      where: { id: { notIn: before.map((run) => run.id) }, outcome: 'succeeded' },
    });
    expect([...new Set(runs.map((run) => run.connectionId))].sort()).toEqual([...ids].sort());
  });
});

describe('more connections due than a page of the tick holds', () => {
  it('are all enqueued by one tick, page after page, past a page whose connection is queued already', async () => {
    clock.advance(3 * 3600); // every band of every connection is due
    // The earliest due of all has its job waiting out a backoff: with one connection a page, the first page
    // holds only it. One page a tick enqueued nobody, at every tick for as long as that job waited.
    const [queued] = ids as [string, ...string[]];
    await h.clients.prisma.connection.update({
      where: { id: queued },
      data: { nextSyncAt: new Date(clock.now().getTime() - 86_400_000) },
    });
    const waiting = await h.clients.syncQueue.add(
      SYNC_JOB,
      { connectionId: queued },
      { ...syncJobOptions(queued, 3), delay: 3_600_000 },
    );

    const result = await tick({ ...h.services.tickDeps, batchSize: 1 });
    expect(result).toMatchObject({ due: ids.length, queued: 1, enqueued: ids.length - 1 });
    expect(await waiting.getState()).toBe('delayed');
    await waiting.remove();
  });
});
