// Fault: the worker's database turns read-only (`ALTER DATABASE … SET default_transaction_read_only = on`,
// what a failover onto a standby or a disk-full guard looks like to new sessions) under a running
// `slotfeed worker` process with HEALTH_PORT. Before, nothing said so while every sync failed. Now its
// /readyz is 503 with postgres "read_only" as soon as new sessions are read-only; syncs fail meanwhile; once the
// database takes writes again it is ready and the sync completes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { enqueueSyncs } from '../../src/sync/queues.js';
import { killProcesses, startWorkerProcess, type SlotfeedProcess } from '../support/child-process.js';
import { TEST_DATABASE_ADMIN_URL } from '../support/db.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { rawRequest } from '../support/web-harness.js';
import { freePort } from './chaos-support.js';
import { patient } from '../support/patience.js';

let h: SyncHarness;
let worker: SlotfeedProcess | undefined;
let health: string;
let connectionId: string;

beforeAll(async () => {
  h = await createSyncHarness('chaos_read_only', {
    clock: null,
    simulator: { users: 1 },
    // Plenty of attempts: the job must outlast the read-only spell.
    env: { SYNC_MAX_ATTEMPTS: '20', SYNC_HORIZON_DAYS: '7' },
  });
  connectionId = await h.connect(h.sim.users[0]!.email);
  const port = await freePort();
  health = `http://127.0.0.1:${port}`;
  worker = await startWorkerProcess({ ...h.env, HEALTH_PORT: String(port), LOG_LEVEL: 'info' });
}, patient(60_000));

afterAll(async () => {
  if (worker) await killProcesses([worker]);
  await setReadOnly(false).catch(() => undefined);
  await h?.close();
});

/** On the server's admin database: the test database's own sessions are the ones being changed. */
async function setReadOnly(on: boolean): Promise<void> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(
      `ALTER DATABASE ${pg.escapeIdentifier(h.db.name)} SET default_transaction_read_only = ${on ? 'on' : 'off'}`,
    );
  } finally {
    await admin.end();
  }
}

const readyz = async () => {
  const response = await rawRequest('GET', `${health}/readyz`);
  return { status: response.status, body: JSON.parse(response.text) as Record<string, unknown> };
};

describe('a worker whose Postgres turns read-only', () => {
  it('is ready while Postgres takes writes', async () => {
    expect(await readyz()).toEqual({
      status: 200,
      body: { status: 'ready', roles: { worker: 'ready' }, postgres: 'ok', redis: 'ok' },
    });
    const worker = await rawRequest('GET', `${health}/readyz/worker`);
    expect(JSON.parse(worker.text)).toEqual({ status: 'ready', postgres: 'ok', redis: 'ok' });
    expect((await rawRequest('GET', `${health}/healthz`)).status).toBe(200);
    expect((await rawRequest('GET', `${health}/metrics`)).text).toContain('slotfeed_sync_runs_total');
  });

  it(
    'is not ready while new sessions are read-only, and its syncs fail meanwhile',
    async () => {
      await setReadOnly(true);
      // Each check opens a new session, as the worker's pool does: the change shows at once.
      expect(await readyz()).toEqual({
        status: 503,
        body: { status: 'not ready', roles: { worker: 'not ready' }, postgres: 'read_only', redis: 'ok' },
      });
      // The worker has opened no pooled connection yet: the sync's own sessions are read-only too.
      const [job] = await enqueueSyncs(h.clients.syncQueue, [connectionId], 20);
      await waitFor(
        async () => (await h.clients.syncQueue.getJob(job!.id!))?.attemptsMade ?? 0,
        (attempts) => attempts >= 1,
        { timeoutMs: 30_000, what: 'a sync attempt to fail on the read-only database' },
      );
      const failed = await h.clients.syncQueue.getJob(job!.id!);
      expect(failed?.failedReason).toMatch(/read-only/);
      expect(await h.clients.syncQueue.getJobState(job!.id!)).not.toBe('completed');

      await setReadOnly(false);
      expect((await readyz()).status).toBe(200);
      await waitFor(
        () => h.clients.syncQueue.getJobState(job!.id!),
        (state) => state === 'completed',
        { timeoutMs: 60_000, what: 'the sync to complete once Postgres takes writes' },
      );
    },
    patient(120_000),
  );
});
