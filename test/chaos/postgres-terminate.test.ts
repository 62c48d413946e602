// Fault: Postgres connections terminated (pg_terminate_backend) while a sync's commit transaction runs. The
// run must be retried until it commits, and a reader must only ever see the whole old snapshot or the whole
// new one, never a mix.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { enqueueSyncs } from '../../src/sync/queues.js';
import { TEST_DATABASE_ADMIN_URL } from '../support/db.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { expectedSync, storedOpenSlots } from '../support/sync-truth.js';
import { waitFor } from '../support/wait-for.js';
import { duplicateOpenSlots } from './chaos-support.js';
import { patient } from '../support/patience.js';

const HORIZON_DAYS = 28;
let h: SyncHarness;
let observer: pg.Client;
let admin: pg.Client;

beforeAll(async () => {
  h = await createSyncHarness('chaos_pg', {
    simulator: { users: 1 },
    env: {
      SYNC_HORIZON_DAYS: String(HORIZON_DAYS),
      SYNC_MAX_ATTEMPTS: '30',
      SYNC_BACKOFF_MS: '20',
      WORKER_CONCURRENCY: '1',
    },
  });
  observer = new pg.Client({ connectionString: h.db.url });
  await observer.connect();
  admin = new pg.Client({ connectionString: TEST_DATABASE_ADMIN_URL });
  await admin.connect();
});
afterAll(async () => {
  await observer?.end();
  await admin?.end();
  await h?.close();
});

/** One statement, so one consistent view: what a feed would read at that instant. */
async function observedOpenSlots(connectionId: string): Promise<string> {
  const result = await observer.query<{ e: string; s: Date; f: Date }>(
    `SELECT upstream_event_id AS e, starts_at AS s, ends_at AS f FROM slot
      WHERE connection_id = $1 AND gone_at IS NULL`,
    [connectionId],
  );
  return result.rows
    .map((r) => `${r.e} ${r.s.toISOString()} ${r.f.toISOString()}`)
    .sort()
    .join('\n');
}

/** Terminates every backend of the test database that is inside a transaction, except the observer's. */
async function terminateTransactions(database: string, spare: number): Promise<number> {
  const result = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = $1 AND pid <> $2 AND xact_start IS NOT NULL AND backend_type = 'client backend'`,
    [database, spare],
  );
  for (const { pid } of result.rows) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  return result.rows.length;
}

describe('Postgres connections terminated mid-commit', () => {
  it(
    'retries the run until it commits; readers see the old or the new snapshot, never a mix',
    async () => {
      const user = h.sim.users[0]!;
      const id = await h.connect(user.email);
      await h.startRoles(['worker']);
      const [first] = await enqueueSyncs(h.clients.syncQueue, [id], 1);
      await waitFor(
        () => h.clients.syncQueue.getJobState(first!.id!),
        (s) => s === 'completed' || s === 'unknown',
        { what: 'the first sync' },
      );
      const oldSnapshot = (await storedOpenSlots(h.clients.prisma, id)).join('\n');
      expect(oldSnapshot.length).toBeGreaterThan(0);

      // Different weekly hours: the next commit closes every open slot and opens a new set (a large change).
      h.sim.control.setWeeklyHours(user.id, {
        mon: [{ start: '06:00', end: '21:00' }],
        tue: [{ start: '06:00', end: '21:00' }],
        wed: [{ start: '06:00', end: '21:00' }],
        thu: [{ start: '06:00', end: '21:00' }],
        fri: [{ start: '06:00', end: '21:00' }],
        sat: [{ start: '07:00', end: '20:00' }],
        sun: [{ start: '07:00', end: '20:00' }],
      });
      // On the harness's clock, which stands still: the snapshot the sync computes is this one, whenever it runs.
      const newSnapshot = expectedSync(h.sim, user.email, h.clock.now(), HORIZON_DAYS).slots.join('\n');
      expect(newSnapshot).not.toEqual(oldSnapshot);

      const spare = (await observer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const [job] = await enqueueSyncs(h.clients.syncQueue, [id], 30);
      const seen = new Set<string>();
      let terminated = 0;
      // Kill transactions until enough commits died or the job is over, observing all the while. Counted in
      // kills, not in seconds: on a loaded machine a window of seconds could close before the worker even
      // began the job (the ceiling only stops a test that would never end).
      const finished = async () =>
        ['completed', 'failed', 'unknown'].includes(await h.clients.syncQueue.getJobState(job!.id!));
      const ceiling = Date.now() + patient(60_000);
      while (terminated < 6 && !(await finished()) && Date.now() < ceiling) {
        terminated += await terminateTransactions(h.db.name, spare);
        seen.add(await observedOpenSlots(id));
      }
      await waitFor(
        () => h.clients.syncQueue.getJobState(job!.id!),
        (s) => s === 'completed' || s === 'unknown',
        { timeoutMs: 30_000, what: 'the sync to commit once the terminations stop' },
      );
      seen.add(await observedOpenSlots(id));

      expect(terminated).toBeGreaterThan(0);
      for (const snapshot of seen) expect([oldSnapshot, newSnapshot]).toContain(snapshot);
      expect(await observedOpenSlots(id)).toEqual(newSnapshot);
      expect(await duplicateOpenSlots(h.clients.prisma)).toBe(0);
      const runs = await h.clients.prisma.syncRun.findMany({
        where: { connectionId: id, jobId: job!.id! },
        // By attempt: on the harness's clock, which stands still, every attempt started at the same instant.
        orderBy: { attempt: 'asc' },
      });
      // The killed attempts that could still record themselves did; the last attempt committed.
      expect(runs.at(-1)?.outcome).toBe('succeeded');
      expect(runs.filter((r) => r.outcome === 'succeeded')).toHaveLength(1);
      // Retried: BullMQ counts every attempt it processed, the killed ones included.
      expect((await h.clients.syncQueue.getJob(job!.id!))?.attemptsMade ?? 0).toBeGreaterThan(1);
      const connection = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id } });
      expect(connection.lastSyncOutcome).toBe('succeeded');
    },
    patient(90_000),
  );
});
