// A sync asked for by a person (`slotfeed sync`, Sync now, a reconnect) runs now and pulls every band, even when
// the connection already has a job: a retry waiting out a long backoff, or a scheduler's job for some bands.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { enqueueBandSyncs, enqueueSyncs } from '../../src/sync/queues.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { patient } from '../support/patience.js';

let h: SyncHarness;
let connectionId: string;

beforeAll(async () => {
  h = await createSyncHarness('sync-now', {
    clock: null,
    simulator: { users: 1 },
    // A failed attempt waits ten minutes or more before its retry: far longer than any wait below.
    env: { SYNC_BACKOFF_MS: '600000', SYNC_MAX_ATTEMPTS: '5' },
  });
  connectionId = await h.connect(h.sim.users[0]!.email);
});
afterAll(async () => {
  await h.close();
});

const lastRun = () =>
  h.clients.prisma.syncRun.findFirst({
    where: { connectionId },
    orderBy: { startedAt: 'desc' },
    select: { outcome: true, bands: true },
  });

describe('a sync asked for now', () => {
  it(
    "pulls every band when the scheduler's job for only the nearest band is still waiting",
    async () => {
      const nearest = h.config.sync.bands[0]!.name;
      const picked = await enqueueBandSyncs(
        h.clients.syncQueue,
        [{ connectionId, bands: [nearest] }],
        h.config.sync.maxAttempts,
        'tick-sync-now',
      );
      expect(picked).toHaveLength(1);

      // No worker yet: the scheduler's job waits, and the sync asked for finds it there.
      await enqueueSyncs(h.clients.syncQueue, [connectionId], h.config.sync.maxAttempts);
      await h.startRoles(['worker']);

      await waitFor(lastRun, (run) => run !== null, { what: 'the waiting job to run' });
      expect(await h.clients.prisma.syncRun.count({ where: { connectionId } })).toBe(1);
      expect(await lastRun()).toEqual({
        outcome: 'succeeded',
        bands: h.config.sync.bands.map((band) => band.name),
      });
    },
    patient(60_000),
  );

  it(
    'runs now when the connection has a retry waiting out its backoff',
    async () => {
      h.sim.control.setFaults({ errorRate: 1 });
      await enqueueSyncs(h.clients.syncQueue, [connectionId], h.config.sync.maxAttempts);
      await waitFor(lastRun, (run) => run?.outcome === 'failed', { what: 'the first attempt to fail' });
      await waitFor(
        () => h.clients.syncQueue.getDelayedCount(),
        (delayed) => delayed === 1,
        { what: 'the retry to wait out its backoff' },
      );
      h.sim.control.setFaults({ errorRate: 0 });

      await enqueueSyncs(h.clients.syncQueue, [connectionId], h.config.sync.maxAttempts);

      await waitFor(lastRun, (run) => run?.outcome === 'succeeded', { what: 'the sync asked for' });
      expect(await h.clients.syncQueue.getDelayedCount()).toBe(0);
      expect((await lastRun())?.bands).toEqual(h.config.sync.bands.map((band) => band.name));
    },
    patient(60_000),
  );
});
