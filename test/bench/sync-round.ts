// Benchmark: one sync round of N simulated connections (simulator latency 50 ms ± 20 ms), end to end through
// the queue, workers, upstream client and Postgres. Reports upstream calls per connection, the round's wall
// time and a no-change re-sync's snapshot writes. Timing is reported, never asserted.
import { enqueueSyncs } from '../../src/sync/queues.js';
import { createSyncHarness } from '../support/sync-harness.js';
import { snapshotRowCounts } from '../support/sync-truth.js';
import { waitFor } from '../support/wait-for.js';

export interface SyncRoundResult {
  connections: number;
  workerConcurrency: number;
  fetchConcurrency: number;
  simulatorLatencyMs: string;
  upstreamCalls: number;
  callsPerConnection: number;
  wallSeconds: number;
  callsPerSecond: number;
  openSlotsStored: number;
  resyncWallSeconds: number;
  resyncSnapshotRowsWritten: number;
}

export async function benchSyncRound(connections: number): Promise<SyncRoundResult> {
  const workerConcurrency = 16;
  const fetchConcurrency = 4;
  const h = await createSyncHarness('bench', {
    clock: null,
    simulator: { users: connections, seed: 1, faults: { latencyMs: 50, jitterMs: 20 } },
    env: {
      WORKER_CONCURRENCY: String(workerConcurrency),
      SYNC_FETCH_CONCURRENCY: String(fetchConcurrency),
      UPSTREAM_RATE_LIMIT_PER_SECOND: '0',
      CALENDBOOK_TIMEOUT_MS: '10000',
    },
  });
  try {
    const ids: string[] = [];
    for (const user of h.sim.users) ids.push(await h.connect(user.email));
    await h.startRoles(['worker']);

    const round = async () => {
      await h.clients.prisma.connection.updateMany({ data: { lastSyncOutcome: null } });
      h.sim.control.resetCallCounts();
      const started = performance.now();
      await enqueueSyncs(h.services.syncQueue, ids, 3);
      await waitFor(
        () => h.clients.prisma.connection.count({ where: { lastSyncOutcome: 'succeeded' } }),
        (n) => n === ids.length,
        { timeoutMs: 600_000, intervalMs: 50, what: 'the round to finish' },
      );
      return (performance.now() - started) / 1000;
    };

    const wallSeconds = await round();
    const upstreamCalls = Object.entries(h.sim.control.callCounts())
      .filter(([endpoint]) => endpoint.startsWith('GET /') && endpoint !== 'GET /login')
      .reduce((sum, [, n]) => sum + n, 0);
    const openSlotsStored = await h.clients.prisma.slot.count({ where: { goneAt: null } });
    const closedSlots = () => h.clients.prisma.slot.count({ where: { goneAt: { not: null } } });
    const before = { ...(await snapshotRowCounts(h.clients.prisma)), closed: await closedSlots() };
    const resyncWallSeconds = await round();
    const after = { ...(await snapshotRowCounts(h.clients.prisma)), closed: await closedSlots() };
    // New rows of every snapshot table, plus slots closed (an update): what a no-change re-sync wrote.
    const written = (['eventTypes', 'profiles', 'overviews', 'slots', 'closed'] as const).reduce(
      (sum, key) => sum + after[key] - before[key],
      0,
    );

    return {
      connections,
      workerConcurrency,
      fetchConcurrency,
      simulatorLatencyMs: '50 ± 20',
      upstreamCalls,
      callsPerConnection: Math.round((upstreamCalls / connections) * 10) / 10,
      wallSeconds: Math.round(wallSeconds * 100) / 100,
      callsPerSecond: Math.round(upstreamCalls / wallSeconds),
      openSlotsStored,
      resyncWallSeconds: Math.round(resyncWallSeconds * 100) / 100,
      resyncSnapshotRowsWritten: written,
    };
  } finally {
    await h.close();
  }
}
