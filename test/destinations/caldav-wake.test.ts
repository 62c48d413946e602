// A sync that changes a feed wakes the CalDAV dispatcher of its process at once (issue 35): the push does not wait
// for the next poll. The poll is set to its longest (CALDAV_DISPATCH_INTERVAL_MS=60000, past every wait here), so
// only the wake-up can have queued the push that a booking's sync asks for. Against a real Radicale.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { eventsOf } from '../feeds/feed-fixtures.js';
import { readBack, startCalDavServer, type CalDavTestServer } from '../support/caldav-servers.js';
import type { FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

let server: CalDavTestServer;
let h: WebHarness;

beforeAll(async () => {
  server = await startCalDavServer('radicale');
  h = await createWebHarness('caldav_wake', {
    env: { CALDAV_ALLOW_PRIVATE_TARGETS: 'true', CALDAV_DISPATCH_INTERVAL_MS: '60000' },
  });
}, patient(30_000));
afterAll(async () => {
  await h?.close();
  await server?.close();
});

it('a commit that changes a feed with a destination gets the change pushed without waiting for the poll', async () => {
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  await h.syncNow(connected.connectionId);
  await h.sync.startRoles(['worker']);
  const { feed, token } = await h.feeds.create({
    connectionId: connected.connectionId,
    options: { view: 'slots', days: 3 },
  });
  const store = h.sync.stores.caldavDestinations;
  // Added through the service, which queues its first push itself.
  const destination = await h.sync.services.caldavDestinations.add({
    feedId: feed.id,
    serverUrl: server.baseUrl,
    username: server.username,
    password: server.password,
  });
  const first = await waitFor(
    () => store.get(destination.id),
    (d) => d.lastPushAt !== null && d.pendingChanges === 0,
    { what: 'the first push' },
  );
  const before = (await readBack(server, destination.calendarUrl)).length;

  const clock = h.sync.clock as FakeClock;
  const slot = (await h.sync.db.prisma.slot.findFirst({
    where: { connectionId: connected.connectionId, goneAt: null, startsAt: { gt: clock.now() } },
    orderBy: { startsAt: 'asc' },
  }))!;
  h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
  clock.advance(300);
  await h.syncNow(connected.connectionId);

  const pushed = await waitFor(
    () => store.get(destination.id),
    (d) => d.pendingChanges === 0 && d.lastPushAt! > first.lastPushAt!,
    { what: 'the booking pushed' },
  );
  expect(pushed.state).toBe('active');
  const shown = eventsOf((await h.get(`/feeds/${token}.ics`)).text).map((event) => event.get('UID'));
  const written = (await readBack(server, destination.calendarUrl)).map((event) => event.uid);
  expect(written.length).toBeLessThan(before);
  expect(written.sort()).toEqual(shown.sort());
});
