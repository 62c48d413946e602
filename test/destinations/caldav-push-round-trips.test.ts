// What one push costs Postgres (issue 43): a push of one change made about 13 round trips (the destination, the
// feed, its owner, the content's transaction statement by statement, the revisions, each write's record and the
// push's end), and half of a push's JavaScript time was the Postgres client. The round trips are counted at the
// wire, by a proxy in front of the real Postgres (postgres-round-trips.ts) that a second process's composition
// talks through, so a change that adds statements to a push shows here. Against a real Radicale.
//
// A push its worker sends back for a full line at its host costs nothing but the BullMQ round: the dispatcher
// names the host in the job, so the push is sent back before it takes its lock or reads its destination, and
// waits parked in the worker's line, run by the worker when a place frees. A push of
// one write records it with its end in one statement; should that fail, the write is still recorded.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { caldavJobId } from '../../src/destinations/caldav-queue.js';
import type { HostPlace } from '../../src/destinations/host-gate.js';
import { isHostWait } from '../../src/destinations/host-limits.js';
import { pushDestination, type PushDeps } from '../../src/destinations/push-destination.js';
import type { FakeClock, Peer } from '../support/sync-harness.js';
import { startCalDavServer, type CalDavTestServer } from '../support/caldav-servers.js';
import { patient } from '../support/patience.js';
import { peerWithCountedRoundTrips, type PostgresRoundTrips } from '../support/postgres-round-trips.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { bookNextSlotAndSync, connectedWithDestination } from './helpers/feed-destination.js';

/**
 * Round trips a push of one changed event may make: its destination with its feed and owner, the feed's content,
 * its events' revisions (decided and stored in one statement), and the write's record with the push's end.
 */
const MOST_ROUND_TRIPS_PER_PUSH = 4;

let server: CalDavTestServer;
let h: WebHarness;
let roundTrips: PostgresRoundTrips;
let counted: Peer;
/** The first test's connection and feed. */
let first: { connectionId: string; feedId: string };

beforeAll(async () => {
  server = await startCalDavServer('radicale');
  h = await createWebHarness('caldav_push_round_trips', { env: { CALDAV_ALLOW_PRIVATE_TARGETS: 'true' } });
  ({ roundTrips, peer: counted } = await peerWithCountedRoundTrips(h.sync));
}, patient(30_000));
afterAll(async () => {
  await h?.close();
  await roundTrips?.close();
  await server?.close();
});

it('a push of one changed event makes at most a handful of Postgres round trips', async () => {
  const { connectionId, destination } = await connectedWithDestination(h, 0, {
    serverUrl: server.baseUrl,
    username: server.username,
    password: server.password,
  });
  // The first push writes the whole feed (a reconciliation); the pool's connections are opened by it.
  expect(await pushDestination(counted.services.caldavPush, destination.id)).toBe('reconciled');

  // One slot booked upstream: after the sync, one block of the feed shrinks.
  await bookNextSlotAndSync(h, connectionId);
  first = { connectionId, feedId: destination.feedId };

  roundTrips.take();
  expect(await pushDestination(counted.services.caldavPush, destination.id)).toBe('pushed');
  const trips = roundTrips.take();
  const pushed = await h.sync.stores.caldavDestinations.get(destination.id);
  expect(pushed).toMatchObject({ pendingChanges: 0, lastError: null });
  const seen = trips.map(
    (trip, i) => `${i + 1}: ${trip.statements.join('; ').replace(/\s+/g, ' ').slice(0, 140)}`,
  );
  // Over the bound, the failure lists the round trips the push made, each with its statements.
  expect(seen.length <= MOST_ROUND_TRIPS_PER_PUSH ? seen.length : seen.join('\n')).toBe(seen.length);
});

it('a push whose end cannot be recorded still records its only write, so a removal would clean it up', async () => {
  const destination = await h.sync.services.caldavDestinations.add({
    feedId: first.feedId,
    serverUrl: server.baseUrl,
    username: server.username,
    password: server.password,
    calendarName: 'End',
  });
  const real = h.sync.services.caldavPush;
  expect(await pushDestination(real, destination.id)).toBe('reconciled');
  // One of slotfeed's events deleted in the calendar behind its back: the next reconciliation writes it again, a
  // push of one write.
  const [gone] = [...(await real.destinations.writtenEvents(destination.id)).values()];
  const deleted = await fetch(new URL(gone!.href, server.baseUrl), {
    method: 'DELETE',
    headers: {
      authorization: `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}`,
    },
  });
  expect(deleted.ok).toBe(true);
  await h.sync.services.caldavDestinations.reconcileNow(destination.id);
  (h.sync.clock as FakeClock).advance(60);

  // The statement that records the write with the push's end fails (Postgres refused it, say).
  const failingEnd: PushDeps = {
    ...real,
    destinations: {
      ...real.destinations,
      writtenAndSucceeded: async () => {
        throw new Error('the end could not be recorded');
      },
    },
  };
  expect(await pushDestination(failingEnd, destination.id)).toBe('failed');
  expect((await real.destinations.logOf(destination.id, 1))[0]?.message).toContain('could not be recorded');
  // Written again, and recorded as written now.
  const rewritten = (await real.destinations.writtenEvents(destination.id)).get(gone!.uid);
  expect(rewritten?.writtenAt.getTime()).toBeGreaterThan(gone!.writtenAt.getTime());
});

it('a push sent back for a full line at its host reads nothing, and comes back when a place frees', async () => {
  const { connectionId, destination } = await connectedWithDestination(h, 1, {
    serverUrl: server.baseUrl,
    username: server.username,
    password: server.password,
    calendarName: 'Line',
  });
  expect(await pushDestination(h.sync.services.caldavPush, destination.id)).toBe('reconciled');
  await bookNextSlotAndSync(h, connectionId);

  // Every place in the line of the counted worker's host taken, as by pushes of its own reading their feeds.
  const host = new URL(destination.calendarUrl).host;
  const gate = counted.services.caldavHostGate;
  const places = Array.from({ length: counted.config.caldav.hostConcurrency }, () => gate.takePlace(host));
  const taken = places.filter((place): place is HostPlace => !isHostWait(place));
  expect(taken).toHaveLength(places.length);

  roundTrips.take();
  await h.sync.startRoles(['worker'], counted);
  const queue = counted.clients.caldavShards.shardFor(destination.id);
  const jobId = caldavJobId(destination.id);
  // Parked in the worker's line, its job ended: no round through the delayed set, and none queued again meanwhile.
  await waitFor(
    async () => ({ parked: gate.isParked(jobId), job: await queue.getJob(jobId) }),
    ({ parked, job }) => parked && job === undefined,
    { what: "the push parked in its worker's line, its job ended" },
  );
  // Its dispatch is all the worker asked Postgres: the push never opened its destination.
  const opened = roundTrips
    .take()
    .filter((trip) => trip.statements.some((s) => s.includes('password_sealed')));
  expect(opened).toEqual([]);
  expect((await h.sync.stores.caldavDestinations.get(destination.id)).pendingChanges).toBeGreaterThan(0);
  // Still due, it is passed over by the worker's dispatcher while parked: two passes later, no job for it was
  // added again (BullMQ's own event stream, which QueueEvents reads, says what was added since the parking).
  const events = h.sync.clients.redis;
  const [[parkedAt] = ['0']] = await events.xrevrange(queue.toKey('events'), '+', '-', 'COUNT', 1);
  let passes = 0;
  await waitFor(
    async () =>
      (passes += roundTrips
        .take()
        .filter((trip) => trip.statements.some((s) => s.includes('caldav_cleanup'))).length),
    (count) => count >= 2,
    { what: 'two passes of the dispatcher after the parking' },
  );
  const addedSince = (await events.xrange(queue.toKey('events'), `(${parkedAt}`, '+')).filter(
    ([, fields]: [string, string[]]) => fields.includes('added') && fields.includes(jobId),
  );
  expect(addedSince).toEqual([]);
  expect(gate.isParked(jobId)).toBe(true);

  // A place left brings it back, and it pushes.
  taken[0]!.leave();
  await waitFor(
    async () => (await h.sync.stores.caldavDestinations.get(destination.id)).pendingChanges,
    (pending) => pending === 0,
    { what: 'the push once a place was free' },
  );
  for (const place of taken) place.leave();
});
