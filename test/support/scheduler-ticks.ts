// One scheduler tick driven by a test, and the wait for what it set off: the tick's own result names the
// connections it enqueued, so the test waits until each has a new successful run and the sync queue has nothing
// waiting or running (never for the clock). Counted by connection, not by runs: on a loaded machine a job whose
// lock lapsed runs again (BullMQ's stalled check), and an attempt whose upstream call timed out is retried;
// either adds a run, and a wait for an exact number of runs then never ended, or ended before a late run
// committed into the next test's count.
import { enqueueDueSyncs, type TickDeps } from '../../src/sync/scheduler.js';
import type { SyncHarness } from './sync-harness.js';
import { waitFor } from './wait-for.js';

export async function tickAndWaitForSyncs(h: SyncHarness, deps: TickDeps = h.services.tickDeps) {
  const { prisma, syncQueue } = h.clients;
  const before = await prisma.syncRun.findMany({ where: { outcome: 'succeeded' }, select: { id: true } });
  const result = await enqueueDueSyncs(deps);
  const synced = async () => {
    const runs = await prisma.syncRun.findMany({
      where: {
        outcome: 'succeeded',
        connectionId: { in: result.enqueuedIds },
        id: { notIn: before.map((run) => run.id) },
      },
      select: { connectionId: true },
    });
    const busy = await syncQueue.getJobCountByTypes('waiting', 'active', 'prioritized');
    return { synced: new Set(runs.map((run) => run.connectionId)).size, busy };
  };
  await waitFor(synced, ({ synced: n, busy }) => n === result.enqueuedIds.length && busy === 0, {
    what: `${result.enqueued} connections synced and the sync queue idle`,
  });
  return result;
}
