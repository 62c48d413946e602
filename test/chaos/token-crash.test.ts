// Fault: with refresh-token rotation on, a worker process dies after the token endpoint answered (the old
// refresh token is spent, a new one issued) but before the new pair was committed. The new refresh token is
// lost with the process, so the connection cannot recover by itself: it must end as needs_reauth after one
// refused refresh, and never loop on invalid_grant.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { enqueueSyncs } from '../../src/sync/queues.js';
import { TEST_DATABASE_ADMIN_URL } from '../support/db.js';
import { killProcesses, startWorkerProcess, type SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { patient } from '../support/patience.js';

let h: SyncHarness;
let locker: pg.Client;
let admin: pg.Client;
const children: SlotfeedProcess[] = [];
const refusals: string[] = [];

beforeAll(async () => {
  h = await createSyncHarness('chaos_token', {
    clock: null,
    simulator: {
      users: 1,
      rotateRefreshTokens: true,
      accessTokenTtlSeconds: 200,
      logger: { info: () => undefined, warn: (_obj, msg) => void refusals.push(msg ?? '') },
    },
    env: { WORKER_LOCK_SECONDS: '2', SYNC_MAX_ATTEMPTS: '5', SYNC_HORIZON_DAYS: '7', LOG_LEVEL: 'info' },
  });
  locker = new pg.Client({ connectionString: h.db.url });
  await locker.connect();
  admin = new pg.Client({ connectionString: TEST_DATABASE_ADMIN_URL });
  await admin.connect();
});
afterAll(async () => {
  await killProcesses(children);
  await locker?.end();
  await admin?.end();
  await h?.close();
});

async function startChildWorker(): Promise<SlotfeedProcess> {
  const worker = await startWorkerProcess(h.env);
  children.push(worker);
  return worker;
}

/**
 * Backends of the test database waiting for a row lock while updating the connection row (as Prisma writes the
 * statement, or as the store writes it past Prisma, after a line break).
 */
async function blockedTokenWrites(): Promise<number[]> {
  const result = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = $1 AND wait_event_type = 'Lock' AND query ~* '^\\s*UPDATE\\s.*connection'`,
    [h.db.name],
  );
  return result.rows.map((r) => r.pid);
}

const tokenCalls = (userId: string) => h.sim.control.callCountsByUser()[userId]?.['POST /oauth2/token'] ?? 0;

describe('crash between the token endpoint answer and the commit of the new tokens (rotation on)', () => {
  it(
    'ends as needs_reauth after one refused refresh and never loops on invalid_grant',
    async () => {
      const user = h.sim.users[0]!;
      const id = await h.connect(user.email);
      const afterConnect = tokenCalls(user.id);
      // The access token has run out (as far as slotfeed knows): the next sync refreshes first.
      await h.clients.prisma.connection.update({
        where: { id },
        data: { accessExpiresAt: new Date(Date.now() - 1000) },
      });

      // The token endpoint answers a second late: time to hold the connection row once the refresh has reached
      // it (not before: the sync writes the row before it refreshes). Its answer then blocks on that row.
      h.sim.control.setFaults({ latencyMs: 1000, only: ['POST /oauth2/token'] });
      const victim = await startChildWorker();
      const [job] = await enqueueSyncs(h.clients.syncQueue, [id], 5);
      await waitFor(
        async () => tokenCalls(user.id),
        (n) => n > afterConnect,
        { intervalMs: 5, what: 'the refresh to reach the token endpoint' },
      );
      await locker.query('BEGIN');
      await locker.query('SELECT id FROM connection WHERE id = $1 FOR UPDATE', [id]);
      h.sim.control.setFaults({ latencyMs: 0 });
      const blocked = await waitFor(blockedTokenWrites, (pids) => pids.length > 0, {
        what: 'the new tokens to be on their way to Postgres',
      });
      expect(tokenCalls(user.id)).toBe(afterConnect + 1);

      // The crash: the process dies and its uncommitted write dies with it (a dead client's backend would
      // otherwise finish the UPDATE once the row lock goes).
      victim.child.kill('SIGKILL');
      await victim.exited;
      for (const pid of blocked) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await locker.query('ROLLBACK');

      await startChildWorker();
      await waitFor(
        () => h.clients.syncQueue.getJobState(job!.id!),
        (s) => s === 'failed' || s === 'completed',
        { timeoutMs: 90_000, what: 'the interrupted job to finish on another worker' },
      );
      const connection = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id } });
      expect(connection.status).toBe('needs_reauth');
      // Exactly one more refresh: the spent token, refused once.
      expect(tokenCalls(user.id)).toBe(afterConnect + 2);
      expect(refusals.filter((m) => m.includes('reused'))).toHaveLength(1);

      // Nothing keeps trying: more sync requests are skipped without touching the token endpoint.
      const later = await enqueueSyncs(h.clients.syncQueue, [id], 5);
      await waitFor(
        () => h.clients.syncQueue.getJobState(later[0]!.id!),
        (s) => s === 'completed',
        { what: 'the later job to be skipped' },
      );
      expect((await h.clients.syncQueue.getJob(later[0]!.id!))?.returnvalue).toEqual({
        skipped: 'connection is needs_reauth',
      });
      expect(tokenCalls(user.id)).toBe(afterConnect + 2);
      expect(await h.stores.connections.findDue(new Date(Date.now() + 86_400_000), 10)).toEqual([]);
    },
    patient(150_000),
  );
});
