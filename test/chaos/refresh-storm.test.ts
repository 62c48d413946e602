// Fault: 200 connections whose access tokens all expire in the middle of a round, two worker processes,
// refresh-token rotation on. Every connection must refresh exactly once (single flight across processes and
// across the concurrent calls of one job), and the auth server must never see a refresh token twice.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { enqueueSyncs } from '../../src/sync/queues.js';
import { killProcesses, startWorkerProcess, type SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { duplicateOpenSlots } from './chaos-support.js';
import { patient } from '../support/patience.js';

const CONNECTIONS = 200;
let h: SyncHarness;
const ids: string[] = [];
const children: SlotfeedProcess[] = [];
const simWarnings: string[] = [];
// The simulator's clock jumps two hours ahead of the real one at the round's first API call: every access token
// issued before expires upstream there and then, while slotfeed still believes them valid, the harshest way to
// expire them (a 401 mid-job). The jump is taken by the simulator itself as it counts that call, not by the
// test noticing the call afterwards: on a loaded machine whole syncs finished before the test looked.
let armed = false;
let roundBegun = false;
function simAheadMs(): number {
  roundBegun ||= armed && apiCallsSoFar() > 0;
  return roundBegun ? 2 * 3600 * 1000 : 0;
}

beforeAll(async () => {
  h = await createSyncHarness('chaos_refresh', {
    clock: null,
    simulator: {
      users: CONNECTIONS,
      rotateRefreshTokens: true,
      accessTokenTtlSeconds: 3600,
      now: () => new Date(Date.now() + simAheadMs()),
      faults: { latencyMs: 15 },
      logger: { info: () => undefined, warn: (_obj, msg) => void simWarnings.push(msg ?? '') },
    },
    env: {
      SYNC_HORIZON_DAYS: '2',
      WORKER_CONCURRENCY: '8',
      SYNC_FETCH_CONCURRENCY: '4',
      SYNC_MAX_ATTEMPTS: '5',
      WORKER_LOCK_SECONDS: '10',
    },
  });
  for (const user of h.sim.users) ids.push(await h.connect(user.email));
}, patient(120_000));
afterAll(async () => {
  await killProcesses(children);
  await h?.close();
});

async function startChildWorker(): Promise<SlotfeedProcess> {
  const worker = await startWorkerProcess({ ...h.env, LOG_LEVEL: 'info' });
  children.push(worker);
  return worker;
}

function apiCallsSoFar(): number {
  return Object.entries(h.sim.control.callCounts())
    .filter(([endpoint]) => endpoint.startsWith('GET /'))
    .reduce((sum, [, n]) => sum + n, 0);
}

describe('200 connections whose tokens expire mid-round, two workers, rotation on', () => {
  it(
    'refreshes each connection exactly once with zero invalid_grant',
    async () => {
      await Promise.all([startChildWorker(), startChildWorker()]);
      h.sim.control.resetCallCounts();
      armed = true;
      const jobs = await enqueueSyncs(h.clients.syncQueue, ids, 5);

      await waitFor(
        () => Promise.all(jobs.map((j) => h.clients.syncQueue.getJobState(j.id!))),
        (states) => states.every((s) => s === 'completed' || s === 'failed'),
        { timeoutMs: 150_000, intervalMs: 500, what: 'the round to finish' },
      );
      const states = await Promise.all(jobs.map((j) => h.clients.syncQueue.getJobState(j.id!)));
      expect(states.filter((s) => s !== 'completed')).toEqual([]);
      expect(roundBegun).toBe(true);

      const byUser = h.sim.control.callCountsByUser();
      const refreshes = h.sim.users.map((u) => byUser[u.id]?.['POST /oauth2/token'] ?? 0);
      expect(refreshes.filter((n) => n !== 1)).toEqual([]);
      expect(simWarnings.filter((m) => m.includes('reused'))).toEqual([]);
      const notActive = await h.clients.prisma.connection.count({ where: { status: { not: 'active' } } });
      expect(notActive).toBe(0);
      const invalidGrant = await h.clients.prisma.syncRun.count({ where: { errorCode: 'needs_reauth' } });
      expect(invalidGrant).toBe(0);
      const succeeded = await h.clients.prisma.connection.count({ where: { lastSyncOutcome: 'succeeded' } });
      expect(succeeded).toBe(CONNECTIONS);
      expect(await duplicateOpenSlots(h.clients.prisma)).toBe(0);
    },
    patient(180_000),
  );
});
