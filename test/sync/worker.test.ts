import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { enqueueSyncs } from '../../src/sync/queues.js';
import { enqueueDueSyncs } from '../../src/sync/scheduler.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { expectedSync, storedOpenSlots } from '../support/sync-truth.js';
import { waitFor } from '../support/wait-for.js';
import { patient } from '../support/patience.js';

let h: SyncHarness;
let ids: string[];

beforeAll(async () => {
  // The real clock: the simulator's rate limit is a sliding window that only a moving clock empties.
  h = await createSyncHarness('worker', {
    clock: null,
    simulator: { users: 4 },
    env: { WORKER_CONCURRENCY: '2', SYNC_MAX_ATTEMPTS: '8', SYNC_BACKOFF_MS: '100' },
  });
  ids = [];
  for (const user of h.sim.users) ids.push(await h.connect(user.email));
});
afterAll(async () => {
  await h.close();
});

const outcomes = () =>
  h.clients.prisma.connection.findMany({ where: { id: { in: ids } }, select: { lastSyncOutcome: true } });
const allSucceeded = (rows: { lastSyncOutcome: string | null }[]) =>
  rows.length === ids.length && rows.every((r) => r.lastSyncOutcome === 'succeeded');

describe('scheduler and worker', () => {
  it('enqueues each due connection once, however often it is asked', async () => {
    const tick = await enqueueDueSyncs(h.services.tickDeps);
    expect(tick.due).toBe(ids.length);
    expect(tick.enqueued).toBe(ids.length);
    // Asked again while those jobs wait, the tick adds none and spends nothing.
    const second = await enqueueDueSyncs(h.services.tickDeps);
    expect(second).toMatchObject({ due: ids.length, enqueued: 0, calls: 0 });
    const again = await enqueueSyncs(h.clients.syncQueue, ids, 3);
    const counts = await h.clients.syncQueue.getJobCounts('waiting', 'active', 'delayed');
    expect((counts.waiting ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0)).toBe(ids.length);
    expect(new Set(again.map((j) => j.id)).size).toBe(ids.length);
  });

  it('syncs every queued connection with a worker, and sets each next sync an interval ahead', async () => {
    await h.startRoles(['worker']);
    await waitFor(outcomes, allSucceeded, { what: 'all connections synced' });
    const rows = await h.clients.prisma.connection.findMany({ where: { id: { in: ids } } });
    const intervalMs = h.config.sync.intervalSeconds * 1000;
    const jitterMs = intervalMs * h.config.sync.jitterRatio;
    for (const row of rows) {
      const ahead = row.nextSyncAt.getTime() - row.lastSyncAt!.getTime();
      expect(ahead).toBeGreaterThanOrEqual(intervalMs - jitterMs);
      expect(ahead).toBeLessThanOrEqual(intervalMs + jitterMs);
      const now = h.clock.now();
      expect(await storedOpenSlots(h.clients.prisma, row.id, now)).toEqual(
        expectedSync(h.sim, row.email!, now, 28).slots,
      );
    }
    // Nobody is due any more, so a tick enqueues nothing.
    const due = (await h.stores.connections.findDue(h.clock.now(), 100)).map((row) => row.id);
    expect(due).toEqual([]);
  });

  it(
    'gets every connection synced through a 429 storm and 30 % server errors, with no job failed for good',
    async () => {
      await h.clients.prisma.connection.updateMany({ data: { lastSyncOutcome: null } });
      h.sim.control.setFaults({
        errorRate: 0.3,
        rateLimit: { requestsPerSecond: 15, retryAfter: 'seconds' },
      });
      try {
        await enqueueSyncs(h.clients.syncQueue, ids, h.config.sync.maxAttempts);
        await waitFor(outcomes, allSucceeded, {
          timeoutMs: 60_000,
          what: 'all connections synced under faults',
        });
      } finally {
        h.sim.control.setFaults({ errorRate: 0, rateLimit: { requestsPerSecond: 0, retryAfter: 'seconds' } });
      }
      expect(await h.clients.syncQueue.getFailedCount()).toBe(0);
      const calls = h.sim.control.callCounts();
      expect(Object.values(calls).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      const failedRuns = await h.clients.prisma.syncRun.count({ where: { outcome: 'failed' } });
      const rateLimitedOrUnavailable = await h.clients.prisma.syncRun.count({
        where: { outcome: 'failed', errorCode: { in: ['unavailable', 'rate_limited'] } },
      });
      expect(rateLimitedOrUnavailable).toBe(failedRuns);
    },
    patient(90_000),
  );
});
