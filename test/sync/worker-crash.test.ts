import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { enqueueSyncs } from '../../src/sync/queues.js';
import { killProcesses, startWorkerProcess, type SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { expectedSync, storedOpenSlots } from '../support/sync-truth.js';
import { waitFor } from '../support/wait-for.js';
import { patient } from '../support/patience.js';

// Real processes and the real clock: the child worker cannot share a fake one.
let h: SyncHarness;
const children: SlotfeedProcess[] = [];

beforeAll(async () => {
  h = await createSyncHarness('crash', {
    clock: null,
    simulator: { users: 2, faults: { latencyMs: 150 } },
    env: { WORKER_LOCK_SECONDS: '2', SYNC_FETCH_CONCURRENCY: '1', LOG_LEVEL: 'info' },
  });
});
afterAll(async () => {
  for (const c of children)
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await h.close();
});

async function startChildWorker(env: Record<string, string> = {}): Promise<SlotfeedProcess> {
  const worker = await startWorkerProcess({ ...h.env, ...env });
  children.push(worker);
  return worker;
}

async function stopAllWorkers() {
  await killProcesses(children);
}

const jobState = async (jobId: string) => h.clients.syncQueue.getJobState(jobId);
const duplicateOpenSlots = async () =>
  h.clients.prisma.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM (
      SELECT 1 FROM slot WHERE gone_at IS NULL GROUP BY connection_id, upstream_event_id, starts_at HAVING count(*) > 1
    ) d`;

describe('worker processes', () => {
  it(
    'recovers the job of a worker killed with SIGKILL mid-sync on another worker, exactly once',
    async () => {
      const user = h.sim.users[0]!;
      const connectionId = await h.connect(user.email);
      const first = await startChildWorker();
      const [job] = await enqueueSyncs(h.clients.syncQueue, [connectionId], 3);
      await waitFor(
        () => jobState(job!.id!),
        (s) => s === 'active',
        { what: 'the job to start' },
      );
      await waitFor(
        async () => h.sim.control.callCountsByUser()[user.id]?.['GET /calendars/{event_id}/slots'] ?? 0,
        (n) => n >= 2,
        { what: 'the sync to be under way' },
      );

      first.child.kill('SIGKILL');
      await first.exited;
      await startChildWorker();

      await waitFor(
        () => jobState(job!.id!),
        (s) => s === 'completed' || s === 'unknown',
        {
          timeoutMs: 40_000,
          what: 'the job to complete on the second worker',
        },
      );
      const runs = await h.clients.prisma.syncRun.findMany({ where: { connectionId } });
      expect(runs.filter((r) => r.outcome === 'succeeded')).toHaveLength(1);
      const now = new Date();
      expect(await storedOpenSlots(h.clients.prisma, connectionId, now)).toEqual(
        expectedSync(h.sim, user.email, now, 28).slots,
      );
      expect(Number((await duplicateOpenSlots())[0]!.n)).toBe(0);
      await stopAllWorkers();
      // Two worker processes start (through tsx) and a stalled check must pass: on a loaded 2-core machine that
      // outlasts jest's default; the bound only guards against hanging.
    },
    patient(90_000),
  );

  it(
    'exits within its grace period on SIGTERM, and the interrupted sync completes later',
    async () => {
      const user = h.sim.users[1]!;
      const connectionId = await h.connect(user.email);
      h.sim.control.setFaults({ latencyMs: 400 });
      const worker = await startChildWorker({ SHUTDOWN_GRACE_SECONDS: '1' });
      const [job] = await enqueueSyncs(h.clients.syncQueue, [connectionId], 3);
      await waitFor(
        () => jobState(job!.id!),
        (s) => s === 'active',
        { what: 'the job to start' },
      );

      const signalledAt = Date.now();
      worker.child.kill('SIGTERM');
      const exit = await worker.exited;
      expect(exit.code).toBe(0);
      // Grace period plus closing connections; the bound only guards against hanging forever.
      expect(Date.now() - signalledAt).toBeLessThan(15_000);

      h.sim.control.setFaults({ latencyMs: 0 });
      await startChildWorker();
      await waitFor(
        () => jobState(job!.id!),
        (s) => s === 'completed' || s === 'unknown',
        {
          timeoutMs: 40_000,
          what: 'the interrupted job to complete later',
        },
      );
      const connection = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
      expect(connection.lastSyncOutcome).toBe('succeeded');
    },
    patient(90_000),
  );
});
