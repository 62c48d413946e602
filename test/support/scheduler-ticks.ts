// One scheduler tick driven by a test, and the wait for what it set off: the tick's own result says how many
// syncs it enqueued, so the test waits for exactly that many more successful runs (never for the clock).
import { enqueueDueSyncs, type TickDeps } from '../../src/sync/scheduler.js';
import type { SyncHarness } from './sync-harness.js';
import { waitFor } from './wait-for.js';

export async function tickAndWaitForSyncs(h: SyncHarness, deps: TickDeps = h.services.tickDeps) {
  const succeededRuns = () => h.clients.prisma.syncRun.count({ where: { outcome: 'succeeded' } });
  const before = await succeededRuns();
  const result = await enqueueDueSyncs(deps);
  await waitFor(succeededRuns, (n) => n === before + result.enqueued, { what: `${result.enqueued} syncs` });
  return result;
}
