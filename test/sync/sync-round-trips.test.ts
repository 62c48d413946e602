// What one sync costs Postgres: a scheduled sync that changes nothing is the daemon's most common work (a million
// connections make some 16 a second at the default bands), and each of its Postgres round trips is a socket write
// and a wait on both sides. It made 18. The commit's locked read now also sets the switch that lets the commit move
// the feed version itself and reads the first sync's instant (two statements of their own before), and the stored
// state the planner compares with (the profile, event types, overviews and open slots) is one read, not four.
// Whether a scheduler's job committed once already stays a statement of its own after the lock: folded into the
// locking read it missed a twin that committed while that read waited (the last test). Counted at the wire, by a
// proxy in front of the real Postgres (postgres-round-trips.ts) that a second process's composition talks through.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { syncConnection, type SyncDeps } from '../../src/sync/sync-connection.js';
import { patient } from '../support/patience.js';
import { peerWithCountedRoundTrips, type PostgresRoundTrips } from '../support/postgres-round-trips.js';
import type { FakeClock, Peer } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

/**
 * Round trips of a scheduled sync of the nearest band that changes nothing: the ticket, its plan's basis (the
 * connection, its event types, its open dates and slots), the access token; then the commit's transaction: begin,
 * the locked read, whether the job committed once already, one read of the stored state, the connection, the run,
 * commit.
 */
const MOST_ROUND_TRIPS_PER_SYNC = 13;

let h: WebHarness;
let roundTrips: PostgresRoundTrips;
let counted: Peer;

beforeAll(async () => {
  h = await createWebHarness('sync_round_trips');
  ({ roundTrips, peer: counted } = await peerWithCountedRoundTrips(h.sync));
}, patient(30_000));
afterAll(async () => {
  await h?.close();
  await roundTrips?.close();
});

it('a scheduled sync of one band that changes nothing makes at most a handful of Postgres round trips', async () => {
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  await h.syncNow(connected.connectionId);
  const nearest = h.sync.config.sync.bands[0]!.name;
  const clock = h.sync.clock as FakeClock;
  const sync = (tick: number) =>
    syncConnection(counted.services.syncDeps, {
      connectionId: connected.connectionId,
      // A scheduler's job id, as a tick names it: the commit checks it has not committed once already.
      jobId: `tick-${tick}-${connected.connectionId}`,
      attempt: 1,
      maxAttempts: 1,
      bands: [nearest],
    });
  // The first opens the pool's connections.
  clock.advance(60);
  await sync(1);
  clock.advance(60);
  roundTrips.take();
  const changes = await sync(2);
  const trips = roundTrips.take();
  expect(changes).toMatchObject({ superseded: false, slotsOpened: 0, slotsClosed: 0 });
  const seen = trips.map(
    (trip, i) => `${i + 1}: ${trip.statements.join('; ').replace(/\s+/g, ' ').slice(0, 140)}`,
  );
  // Over the bound, the failure lists the round trips the sync made, each with its statements.
  expect(seen.length <= MOST_ROUND_TRIPS_PER_SYNC ? seen.length : seen.join('\n')).toBe(seen.length);
  // The first sync's instant is still kept, and not moved by later ones.
  const stored = await h.sync.db.prisma.connection.findUniqueOrThrow({
    where: { id: connected.connectionId },
  });
  expect(stored.firstSyncedAt).not.toBeNull();
  expect(stored.firstSyncedAt!.getTime()).toBeLessThan(stored.lastGoodSyncAt!.getTime());
});

it('a scheduler’s job that runs again after it committed is recorded superseded, not committed twice', async () => {
  const connected = await h.connectViaWeb(h.sync.sim.users[1]!.email);
  await h.syncNow(connected.connectionId);
  const clock = h.sync.clock as FakeClock;
  const attempt = {
    connectionId: connected.connectionId,
    jobId: `tick-again-${connected.connectionId}`,
    attempt: 1,
    maxAttempts: 1,
  };
  clock.advance(60);
  expect(await syncConnection(counted.services.syncDeps, attempt)).toMatchObject({ superseded: false });
  // Its completion lost (a failover), the same job runs once more.
  clock.advance(60);
  expect(await syncConnection(counted.services.syncDeps, attempt)).toMatchObject({ superseded: true });
  const runs = await h.sync.db.prisma.syncRun.findMany({
    where: { connectionId: connected.connectionId, jobId: attempt.jobId },
    orderBy: { startedAt: 'asc' },
  });
  expect(runs.map((run) => run.outcome)).toEqual(['succeeded', 'superseded']);
});

it('a job whose twin commits while it waits for the connection’s lock is recorded superseded', async () => {
  const connected = await h.connectViaWeb(h.sync.sim.users[2]!.email);
  await h.syncNow(connected.connectionId);
  const jobId = `tick-twin-${connected.connectionId}`;
  const twin = new pg.Client({ connectionString: h.sync.db.url });
  await twin.connect();
  const waitingForTheLock = async () =>
    (
      await twin.query<{ waiting: number }>(
        // Blocked by the twin's session, whatever its statement reads as: Postgres 15.20 shows a statement sent by
        // the extended protocol and waiting for a lock as its transaction's BEGIN, idle in transaction.
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
         WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))`,
      )
    ).rows[0]!.waiting;
  const real = counted.services.syncDeps;
  const deps: SyncDeps = {
    ...real,
    snapshots: {
      ...real.snapshots,
      // Its pull done, this job commits just as its twin (the same job, handed to another worker while this one
      // still ran) is committing: the twin holds the connection's row and has written its run, not yet committed.
      commit: async (input) => {
        await twin.query('BEGIN');
        await twin.query('SELECT 1 FROM connection WHERE id = $1 FOR UPDATE', [connected.connectionId]);
        await twin.query(
          `INSERT INTO sync_run (id, connection_id, job_id, outcome, finished_at)
           VALUES (gen_random_uuid(), $1, $2, 'succeeded', now())`,
          [connected.connectionId, jobId],
        );
        const committing = real.snapshots.commit(input);
        await waitFor(waitingForTheLock, (waiting) => waiting > 0, {
          what: 'the commit waiting for the connection’s lock',
        });
        await twin.query('COMMIT');
        return committing;
      },
    },
  };
  try {
    (h.sync.clock as FakeClock).advance(60);
    const changes = await syncConnection(deps, {
      connectionId: connected.connectionId,
      jobId,
      attempt: 1,
      maxAttempts: 1,
    });
    expect(changes).toMatchObject({ superseded: true });
  } finally {
    await twin.end();
  }
  const runs = await h.sync.db.prisma.syncRun.findMany({
    where: { connectionId: connected.connectionId, jobId },
  });
  expect(runs.map((run) => run.outcome).sort()).toEqual(['succeeded', 'superseded']);
});
