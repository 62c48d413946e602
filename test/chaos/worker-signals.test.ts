// Faults: a worker process killed with SIGKILL mid-job while a second worker runs, and SIGTERM with jobs in
// flight. Real child processes (the CLI through tsx) and the real clock. Every interrupted job must complete
// exactly once more, on the surviving worker.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Job } from 'bullmq';
import { enqueueSyncs, type SyncJobData } from '../../src/sync/queues.js';
import { killProcesses, startWorkerProcess, type SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { expectedSync, storedOpenSlots } from '../support/sync-truth.js';
import { waitFor } from '../support/wait-for.js';
import { duplicateOpenSlots, overlappingRuns } from './chaos-support.js';
import { patient } from '../support/patience.js';

const HORIZON_DAYS = 14;
let h: SyncHarness;
const ids: string[] = [];
const children: SlotfeedProcess[] = [];

beforeAll(async () => {
  h = await createSyncHarness('chaos_signals', {
    clock: null,
    simulator: { users: 6, faults: { latencyMs: 120 } },
    env: {
      SYNC_HORIZON_DAYS: String(HORIZON_DAYS),
      WORKER_LOCK_SECONDS: '2',
      WORKER_CONCURRENCY: '2',
      SYNC_FETCH_CONCURRENCY: '1',
      LOG_LEVEL: 'info',
    },
  });
  for (const user of h.sim.users) ids.push(await h.connect(user.email));
}, patient(60_000));
afterAll(async () => {
  await killProcesses(children);
  await h?.close();
});

async function startChildWorker(env: Record<string, string> = {}): Promise<SlotfeedProcess> {
  const worker = await startWorkerProcess({ ...h.env, ...env });
  children.push(worker);
  return worker;
}

const alive = (p: SlotfeedProcess) => p.child.exitCode === null && p.child.signalCode === null;
const states = (jobs: Job<SyncJobData>[]) =>
  Promise.all(jobs.map((job) => h.clients.syncQueue.getJobState(job.id!)));
const allCompleted = (s: string[]) => s.every((state) => state === 'completed');

/** Each job has exactly one committed run: none lost, none done twice. */
async function expectEachJobCommittedOnce(jobs: Job<SyncJobData>[]) {
  for (const job of jobs) {
    const committed = await h.clients.prisma.syncRun.count({
      where: { jobId: job.id!, connectionId: job.data.connectionId, outcome: 'succeeded' },
    });
    expect({ job: job.id, committed }).toEqual({ job: job.id, committed: 1 });
  }
  const now = new Date();
  for (const [i, id] of ids.entries()) {
    expect(await storedOpenSlots(h.clients.prisma, id, now)).toEqual(
      expectedSync(h.sim, h.sim.users[i]!.email, now, HORIZON_DAYS).slots,
    );
  }
  expect(await duplicateOpenSlots(h.clients.prisma)).toBe(0);
  expect(await overlappingRuns(h.clients.prisma)).toEqual([]);
}

describe('worker processes killed and stopped with jobs in flight', () => {
  let survivor: SlotfeedProcess;

  it(
    'SIGKILL mid-job while a second worker runs: each interrupted job completes exactly once more',
    async () => {
      const victim = await startChildWorker();
      const jobs = await enqueueSyncs(h.clients.syncQueue, ids, 3);
      // The victim alone takes the first jobs; the survivor starts while they are under way.
      await waitFor(
        () => h.clients.syncQueue.getActiveCount(),
        (n) => n >= 2,
        { what: 'jobs in flight on the victim' },
      );
      survivor = await startChildWorker();
      await waitFor(
        async () => Object.values(h.sim.control.callCounts()).reduce((a, b) => a + b, 0),
        (n) => n > 30,
        { what: 'syncs under way' },
      );
      const inFlight = await h.clients.syncQueue.getActive();
      expect(inFlight.length).toBeGreaterThan(0);
      victim.child.kill('SIGKILL');
      await victim.exited;

      await waitFor(() => states(jobs), allCompleted, { timeoutMs: 60_000, what: 'every job completed' });
      expect(alive(survivor)).toBe(true);
      // At least one job really was taken from the dead worker (BullMQ's stalled check moved it back).
      const recovered = await Promise.all(jobs.map((j) => h.clients.syncQueue.getJob(j.id!)));
      expect(recovered.some((j) => (j?.stalledCounter ?? 0) > 0)).toBe(true);
      await expectEachJobCommittedOnce(jobs);
    },
    patient(120_000),
  );

  it(
    'SIGTERM with jobs in flight: exits within its grace period; the interrupted jobs complete later',
    async () => {
      h.sim.control.setFaults({ latencyMs: 400 });
      await h.clients.prisma.connection.updateMany({ data: { lastSyncOutcome: null } });
      const stopping = await startChildWorker({ SHUTDOWN_GRACE_SECONDS: '1', WORKER_CONCURRENCY: '4' });
      // The survivor is busy elsewhere only by chance; give the stopping worker the jobs by pausing the survivor.
      survivor.child.kill('SIGSTOP');
      try {
        const jobs = await enqueueSyncs(h.clients.syncQueue, ids, 3);
        await waitFor(
          () => h.clients.syncQueue.getActiveCount(),
          (n) => n >= 2,
          { what: 'jobs in flight on the stopping worker' },
        );
        const signalledAt = Date.now();
        stopping.child.kill('SIGTERM');
        const exit = await stopping.exited;
        const tookMs = Date.now() - signalledAt;
        expect(exit.code).toBe(0);
        // 1 s of grace plus closing Redis and Postgres; the bound guards against hanging, it is not a timing test.
        expect(tookMs).toBeLessThan(10_000);
        expect(stopping.output()).toContain('handing them back');
        survivor.child.kill('SIGCONT');
        h.sim.control.setFaults({ latencyMs: 20 });

        await waitFor(() => states(jobs), allCompleted, {
          timeoutMs: 60_000,
          what: 'the interrupted jobs to complete on the other worker',
        });
        await expectEachJobCommittedOnce(jobs);
        // A deploy is not a failure: the cut attempts are recorded as interrupted, none as failed, and no job
        // spent an attempt on them.
        const runs = await h.clients.prisma.syncRun.findMany({
          where: { jobId: { in: jobs.map((j) => j.id!) } },
        });
        expect(runs.filter((r) => r.outcome === 'interrupted').length).toBeGreaterThan(0);
        expect(runs.filter((r) => r.outcome === 'failed')).toEqual([]);
        const finished = await Promise.all(jobs.map((j) => h.clients.syncQueue.getJob(j.id!)));
        expect(finished.map((j) => j?.attemptsMade)).toEqual(jobs.map(() => 1));
        const connections = await h.clients.prisma.connection.findMany({ where: { id: { in: ids } } });
        expect(connections.filter((c) => c.lastSyncOutcome === 'failed')).toEqual([]);
      } finally {
        if (alive(survivor)) survivor.child.kill('SIGCONT');
      }
    },
    patient(120_000),
  );
});
