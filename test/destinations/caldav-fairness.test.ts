// Fair to every CalDAV server (issue 35): a host that holds every request (a slow provider) gets no more than
// CALDAV_HOST_CONCURRENCY of them at once, counted on its side (a proxy of the test's own in front of a real
// Radicale), and the worker's slots go on serving another host meanwhile: its destinations are pushed while the
// slow host's requests still wait. Without the per-host limit, the slow host's pushes take every worker slot and
// nothing else moves until it answers. And a push asks its host for one slot per write it has: pushes of one
// change each to one server go on side by side up to the limit, where one push taking every slot made them queue.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { caldavCleanupJobId } from '../../src/destinations/caldav-queue.js';
import { createHostLimits } from '../../src/destinations/host-limits.js';
import type { CaldavDestinationRecord } from '../../src/store/caldav-destinations.js';
import { startCalDavServer, type CalDavTestServer } from '../support/caldav-servers.js';
import type { FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { startFaultProxy, type FaultProxy } from './helpers/fault-proxy.js';
import { patient } from '../support/patience.js';

const HOST_CONCURRENCY = 2;
let slowServer: CalDavTestServer;
let fastServer: CalDavTestServer;
let slow: FaultProxy;
let h: WebHarness;

beforeAll(async () => {
  [slowServer, fastServer] = await Promise.all([
    startCalDavServer('radicale'),
    startCalDavServer('radicale'),
  ]);
  slow = await startFaultProxy(slowServer.baseUrl);
  h = await createWebHarness('caldav_fairness', {
    env: {
      CALDAV_ALLOW_PRIVATE_TARGETS: 'true',
      CALDAV_DISPATCH_INTERVAL_MS: '100',
      CALDAV_CONCURRENCY: '4',
      CALDAV_HOST_CONCURRENCY: String(HOST_CONCURRENCY),
      // Held requests wait for the test, not for a client's time limit (whose failure would free their slots).
      CALDAV_TIMEOUT_SECONDS: '300',
    },
  });
}, patient(30_000));
afterAll(async () => {
  await h?.close();
  await slow?.close();
  await Promise.all([slowServer?.close(), fastServer?.close()]);
});

it(
  'a host that holds every request gets at most its host limit at once, and another host’s calendars are pushed meanwhile',
  async () => {
    const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
    await h.syncNow(connected.connectionId);
    await h.sync.startRoles(['worker']);
    const { feed } = await h.feeds.create({
      connectionId: connected.connectionId,
      options: { view: 'slots', days: 2 },
    });
    const service = h.sync.services.caldavDestinations;
    const store = h.sync.stores.caldavDestinations;
    const add = (server: CalDavTestServer, serverUrl: string, name: string) =>
      service.add({
        feedId: feed.id,
        serverUrl,
        calendarName: name,
        username: server.username,
        password: server.password,
      });
    const onSlow: CaldavDestinationRecord[] = [];
    const onFast: CaldavDestinationRecord[] = [];
    for (let i = 0; i < 5; i++) onSlow.push(await add(slowServer, slow.url, `Slow ${i}`));
    for (let i = 0; i < 3; i++) onFast.push(await add(fastServer, fastServer.baseUrl, `Fast ${i}`));
    const pushedAfter = (since: Date, destinations: CaldavDestinationRecord[]) =>
      waitFor(
        () => Promise.all(destinations.map((d) => store.get(d.id))),
        (all) => all.every((d) => d.pendingChanges === 0 && d.lastPushAt !== null && d.lastPushAt > since),
        { what: 'the destinations pushed' },
      );
    await pushedAfter(new Date(0), [...onSlow, ...onFast]);

    // The slow host now holds every request until the test lets it answer.
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    slow.resetCount();
    const removeFault = slow.install(() => ({ kind: 'hold', until: held }));
    const clock = h.sync.clock as FakeClock;
    const before = clock.now();
    clock.advance(60);
    try {
      await h.feeds.updateOptions(feed.id, { view: 'free', days: 2 }, clock.now());
      await pushedAfter(before, onFast);
      expect(slow.requests().length).toBeGreaterThan(0);
      expect(slow.mostAtOnce()).toBeLessThanOrEqual(HOST_CONCURRENCY);
      const slowOnes = await Promise.all(onSlow.map((d) => store.get(d.id)));
      expect(slowOnes.every((d) => d.pendingChanges > 0)).toBe(true);
    } finally {
      answer();
      removeFault();
    }
    await pushedAfter(before, onSlow);
    expect(slow.mostAtOnce()).toBeLessThanOrEqual(HOST_CONCURRENCY);
  },
  patient(30_000),
);

it(
  'a push of one change takes one slot at its host: a second person’s push to that server goes on beside it',
  async () => {
    await h.sync.startRoles(['worker']);
    const service = h.sync.services.caldavDestinations;
    const store = h.sync.stores.caldavDestinations;
    const clock = h.sync.clock as FakeClock;
    // Two people, each with a busy-view feed pushed to the slow server: a booking adds one busy block, so each
    // push that follows one is a single write.
    const people = await Promise.all(
      [1, 2].map(async (index) => {
        const { connectionId } = await h.connectViaWeb(h.sync.sim.users[index]!.email);
        await h.syncNow(connectionId);
        const { feed } = await h.feeds.create({ connectionId, options: { view: 'busy', days: 3 } });
        const destination = await service.add({
          feedId: feed.id,
          serverUrl: slow.url,
          calendarName: `Busy ${index}`,
          username: slowServer.username,
          password: slowServer.password,
        });
        return { connectionId, destination };
      }),
    );
    const pushedAfter = (since: Date) =>
      waitFor(
        () => Promise.all(people.map(({ destination }) => store.get(destination.id))),
        (all) => all.every((d) => d.pendingChanges === 0 && d.lastPushAt !== null && d.lastPushAt > since),
        { what: 'both destinations pushed' },
      );
    await pushedAfter(new Date(0));
    const books = async (connectionId: string) => {
      const slot = (await h.sync.db.prisma.slot.findFirst({
        where: {
          connectionId,
          goneAt: null,
          startsAt: { gt: new Date(clock.now().getTime() + 24 * 3600_000) },
        },
        orderBy: { startsAt: 'asc' },
      }))!;
      h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
      await h.syncNow(connectionId);
    };
    const writesHeld = (count: number) =>
      waitFor(
        async () => slow.requests().filter((request) => request.startsWith('PUT ')),
        (puts) => puts.length >= count,
        { what: `${count} writes under way at the slow host` },
      );

    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    slow.resetCount();
    const removeFault = slow.install(() => ({ kind: 'hold', until: held }));
    const before = clock.now();
    clock.advance(600);
    try {
      // The first person's write waits at the server, holding its slot; the second's goes out beside it.
      await books(people[0]!.connectionId);
      await writesHeld(1);
      await books(people[1]!.connectionId);
      const puts = await writesHeld(2);
      const calendarOf = (request: string) => request.split(' ')[1]!.split('/').slice(0, -1).join('/');
      expect(new Set(puts.map(calendarOf)).size).toBe(2);
    } finally {
      answer();
      removeFault();
    }
    await pushedAfter(before);
    expect(slow.requests().filter((request) => request.startsWith('PUT '))).toHaveLength(2);
    expect(slow.mostAtOnce()).toBeLessThanOrEqual(HOST_CONCURRENCY);
  },
  patient(30_000),
);

it(
  'a cleanup for a held host waits outside the worker’s slots: a push to another server goes on meanwhile',
  async () => {
    const service = h.sync.services.caldavDestinations;
    const store = h.sync.stores.caldavDestinations;
    const queue = h.sync.clients.caldavQueue;
    const clock = h.sync.clock as FakeClock;
    // The first person's connection (every simulated person has one by now), with a feed of its own.
    const { id: connectionId } = await h.sync.db.prisma.connection.findFirstOrThrow({
      orderBy: { createdAt: 'asc' },
    });
    const { feed } = await h.feeds.create({ connectionId, options: { view: 'slots', days: 2 } });
    const add = (server: CalDavTestServer, serverUrl: string, name: string) =>
      service.add({
        feedId: feed.id,
        serverUrl,
        calendarName: name,
        username: server.username,
        password: server.password,
      });
    // More calendars on the slow server than the workers the tests above started have slots (two, of
    // CALDAV_CONCURRENCY each), and one elsewhere.
    const leaving: CaldavDestinationRecord[] = [];
    for (let i = 0; i < 12; i++) leaving.push(await add(slowServer, slow.url, `Leaving ${i}`));
    const elsewhere = await add(fastServer, fastServer.baseUrl, 'Elsewhere');
    const pushedAfter = (since: Date, destinations: CaldavDestinationRecord[]) =>
      waitFor(
        () => Promise.all(destinations.map((d) => store.get(d.id))),
        (all) => all.every((d) => d.pendingChanges === 0 && d.lastPushAt !== null && d.lastPushAt > since),
        { what: 'the destinations pushed' },
      );
    await pushedAfter(new Date(0), [...leaving, elsewhere]);

    // The slow server asked every client to wait an hour (a 503 with Retry-After to someone's push).
    const host = new URL(slow.url).host;
    const keyPrefix = `${h.sync.redis.prefix}:caldav-host`;
    const hosts = createHostLimits(h.sync.clients.redis, {
      concurrency: HOST_CONCURRENCY,
      perSecond: 0,
      slotTimeoutMs: 60_000,
      keyPrefix,
    });
    await hosts.holdBack(host, 3600_000);
    slow.resetCount();
    try {
      // Their cleanups are queued first, then the push elsewhere: a worker that slept a cleanup's hold in its slot
      // would have none left for it.
      for (const destination of leaving) await service.remove(destination.id);
      const before = clock.now();
      clock.advance(60);
      await h.feeds.updateOptions(feed.id, { view: 'free', days: 2 }, clock.now());
      await pushedAfter(before, [elsewhere]);
      // The cleanups wait for the host's hold in the delayed set, and nothing was sent to it.
      await waitFor(
        () =>
          Promise.all(leaving.map(async (d) => (await queue.getJob(caldavCleanupJobId(d.id)))?.getState())),
        (states) => states.every((state) => state === 'delayed'),
        { what: 'every cleanup waiting for the host in the delayed set' },
      );
      expect(slow.requests().filter((request) => request.startsWith('DELETE '))).toEqual([]);
    } finally {
      await h.sync.clients.redis.del(`${keyPrefix}:rate:${host}:paused-until`);
      for (const job of await queue.getDelayed()) await job.promote();
    }
    await waitFor(
      () => service.cleanups({ connectionId }),
      (cleanups) => cleanups.length === 0,
      { what: 'the cleanups done once the hold is over' },
    );
  },
  patient(60_000),
);
