// Fair to every CalDAV server (issue 35): a host that holds every request (a slow provider) gets no more than
// CALDAV_HOST_CONCURRENCY of them at once, counted on its side (a proxy of the test's own in front of a real
// Radicale), and the worker's slots go on serving another host meanwhile: its destinations are pushed while the
// slow host's requests still wait. Without the per-host limit, the slow host's pushes take every worker slot and
// nothing else moves until it answers.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
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
