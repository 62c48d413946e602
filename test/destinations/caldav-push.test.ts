// CalDAV destinations end to end, against real Radicale and Xandikos: a synced connection's feed (simulator →
// sync → snapshot) written into a calendar by the worker role's CalDAV worker, and read back by an independent
// client (python3-caldav) to be compared with the feed's .ics as the web role serves it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Counter, Histogram } from 'prom-client';
import { openCalDavAccount, CalDavCredentialsError } from '../../src/caldav/index.js';
import { InvalidDestinationError } from '../../src/destinations/caldav-destinations-service.js';
import { caldavJobId, dispatchDuePushes } from '../../src/destinations/caldav-queue.js';
import type { CaldavDestinationRecord } from '../../src/store/caldav-destinations.js';
import { eventsOf } from '../feeds/feed-fixtures.js';
import {
  addOwnEvent,
  CALDAV_SERVER_KINDS,
  readBack,
  startCalDavServer,
  type CalDavTestServer,
} from '../support/caldav-servers.js';
import type { FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { startOutageProxy } from './helpers/outage-proxy.js';

/** An iCalendar UTC date-time (20260302T100000Z) as the reader prints it (2026-03-02T10:00:00Z). */
const isoOf = (stamp: string | undefined) =>
  stamp?.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z') ?? null;

describe.each(CALDAV_SERVER_KINDS)('CalDAV destinations against %s', (kind) => {
  let server: CalDavTestServer;
  let h: WebHarness;
  let connectionId: string;
  let feedToken: string;
  let feedId: string;
  const clock = () => h.sync.clock as FakeClock;
  const service = () => h.sync.services.caldavDestinations;
  const store = () => h.sync.stores.caldavDestinations;
  const credentials = () => ({ username: server.username, password: server.password });

  /** The feed's events as its .ics shows them, in the reader's terms. */
  async function feedAsServed(token = feedToken) {
    const response = await h.get(`/feeds/${token}.ics`);
    expect(response.status).toBe(200);
    return eventsOf(response.text)
      .map((event) => ({
        uid: event.get('UID')!,
        summary: event.get('SUMMARY')!,
        dtstart: isoOf(event.get('DTSTART')),
        dtend: isoOf(event.get('DTEND')),
      }))
      .sort((a, b) => (a.uid < b.uid ? -1 : 1));
  }

  /** slotfeed's events in the calendar (the reader's view), without where they are stored. */
  async function pushed(destination: CaldavDestinationRecord) {
    return (await readBack(server, destination.calendarUrl))
      .filter((event) => event.marker !== null)
      .map(({ uid, summary, dtstart, dtend, marker }) => {
        expect(marker).toBe(destination.feedId);
        return { uid, summary, dtstart, dtend };
      });
  }

  /** A metric's value in this process's registry (a histogram's by its _count). */
  async function metricValue(
    metric: 'caldavPushLagSeconds' | 'caldavFailures' | 'caldavPushes',
    labels: Record<string, string> = {},
  ) {
    const { values } = await (h.sync.clients.metrics[metric] as Counter | Histogram).get();
    const matching = values.filter(
      (v: { metricName?: string; labels: Record<string, string | number | undefined> }) =>
        (metric !== 'caldavPushLagSeconds' || v.metricName?.endsWith('_count')) &&
        Object.entries(labels).every(([name, value]) => v.labels[name] === value),
    );
    return matching.reduce((sum, v) => sum + v.value, 0);
  }

  /** Waits until the worker has pushed everything pending and any reconciliation asked for. */
  const settled = (destinationId: string) =>
    waitFor(
      () => store().get(destinationId),
      (d) => d.pendingChanges === 0 && d.reconcileRequestedAt === null && d.lastPushAt !== null,
      { what: `destination ${destinationId} pushed` },
    );

  beforeAll(async () => {
    server = await startCalDavServer(kind);
    h = await createWebHarness(`caldav_push_${kind}`, {
      env: { CALDAV_ALLOW_PRIVATE_TARGETS: 'true', CALDAV_DISPATCH_INTERVAL_MS: '100' },
    });
    const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
    connectionId = connected.connectionId;
    feedToken = connected.token!;
    feedId = (await h.feeds.findByToken(feedToken))!.id;
    await h.syncNow(connectionId);
    await h.sync.startRoles(['worker']);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await server?.close();
  });

  describe('one destination, pushed by the worker', () => {
    let destination: CaldavDestinationRecord;
    const dentist = {
      uid: 'dentist-appointment',
      summary: 'Dentist',
      start: '2026-03-03T10:00:00Z',
      end: '2026-03-03T11:00:00Z',
    };

    beforeAll(async () => {
      destination = await service().add({ feedId, serverUrl: server.baseUrl, ...credentials() });
    });

    it('writes the feed event by event: the calendar holds exactly what the .ics shows, marked as the feed’s', async () => {
      expect(destination).toMatchObject({ state: 'active', calendarName: 'Free time (slotfeed)' });
      expect(destination.calendarUrl.startsWith(server.homeUrl)).toBe(true);
      await settled(destination.id);
      const expected = await feedAsServed();
      expect(expected.length).toBeGreaterThan(3);
      expect(await pushed(destination)).toEqual(expected);
      // The lag from the change (here: the destination added) to the server's answer was measured.
      expect(await metricValue('caldavPushLagSeconds')).toBeGreaterThan(0);
      expect(await metricValue('caldavPushes', { outcome: 'reconciled' })).toBeGreaterThan(0);
    });

    it('a booking in the simulator changes the block on the server after the next sync, and a person’s own event stays as it was', async () => {
      await addOwnEvent(server, destination.calendarUrl, dentist);
      const [own] = (await readBack(server, destination.calendarUrl)).filter((e) => e.uid === dentist.uid);
      const before = await pushed(destination);

      const slot = (await h.sync.db.prisma.slot.findFirst({
        where: { connectionId, goneAt: null, startsAt: { gt: new Date(clock().now().getTime() + 3600_000) } },
        orderBy: { startsAt: 'asc' },
      }))!;
      h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
      clock().advance(600);
      await h.syncNow(connectionId);
      const expected = await feedAsServed();
      expect(expected).not.toEqual(before);

      await settled(destination.id);
      expect(await pushed(destination)).toEqual(expected);
      expect((await readBack(server, destination.calendarUrl)).filter((e) => e.marker === null)).toEqual([
        own,
      ]);
    });

    it('reconciliation writes back an event edited in the calendar and one deleted there, and logs each repair', async () => {
      const elsewhere = await openCalDavAccount({
        serverUrl: destination.calendarUrl,
        ...credentials(),
        allowPrivateTargets: true,
      });
      const {
        events: [edited, deleted],
      } = await elsewhere.listFeedEvents(destination.calendarUrl, feedId);
      await elsewhere.updateEvent({
        ...edited!,
        icalendar: edited!.icalendar.replace(/^SUMMARY:.*$/m, 'SUMMARY:Moved by hand\r'),
      });
      await elsewhere.deleteEvent(deleted!);
      expect((await readBack(server, destination.calendarUrl)).map((e) => e.summary)).toContain(
        'Moved by hand',
      );

      await service().reconcileNow(destination.id);
      await settled(destination.id);
      expect(await pushed(destination)).toEqual(await feedAsServed());
      const log = await service().log(destination.id);
      expect(log).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ kind: 'repair-restored', uid: edited!.uid }),
          expect.objectContaining({ kind: 'repair-created', uid: deleted!.uid }),
        ]),
      );
      expect((await readBack(server, destination.calendarUrl)).filter((e) => e.marker === null)).toEqual([
        expect.objectContaining({
          uid: dentist.uid,
          summary: 'Dentist',
          dtstart: dentist.start,
          dtend: dentist.end,
        }),
      ]);
    });

    it('removing the destination removes it at once; a worker then deletes the feed’s events and leaves the person’s own', async () => {
      const { eventsToDelete } = await service().remove(destination.id);
      expect(eventsToDelete).toBe((await feedAsServed()).length);
      expect(await service().list({ feedId })).toEqual([]);
      await waitFor(
        () => service().cleanups(),
        (left) => left.length === 0,
        { what: 'the removed destination’s cleanup done' },
      );
      expect(await readBack(server, destination.calendarUrl)).toEqual([
        expect.objectContaining({ uid: dentist.uid, marker: null }),
      ]);
    });
  });

  it('a team feed (who is free, over a few days) is written as its .ics shows it', async () => {
    const team = await h.sync.stores.teams.create(`team-${kind}`);
    await h.sync.stores.teams.addMembers(team.id, [connectionId]);
    const { feed, token } = await h.feeds.createTeamFeed({
      teamId: team.id,
      options: { mode: 'any', days: 7 },
    });
    const destination = await service().add({
      feedId: feed.id,
      serverUrl: server.baseUrl,
      calendarName: 'Team',
      ...credentials(),
    });
    await settled(destination.id);
    const expected = await feedAsServed(token);
    expect(expected.length).toBeGreaterThan(0);
    expect(await pushed(destination)).toEqual(expected);
  });

  it('a server stopped mid-push: once it is back, no event is lost or written twice', async () => {
    const proxy = await startOutageProxy(server.baseUrl);
    const unreachableBefore = await metricValue('caldavFailures', { cause: 'unreachable' });
    try {
      // A few days only: Xandikos commits each write to git, and a month of slots is hundreds of them.
      const days = 5;
      const { feed, token } = await h.feeds.create({ connectionId, options: { view: 'slots', days } });
      const freeBlocks = (await h.feeds.create({ connectionId, options: { view: 'free', days } })).token;
      expect((await feedAsServed(freeBlocks)).length).toBeGreaterThan(3);
      const destination = await service().add({
        feedId: feed.id,
        serverUrl: proxy.url,
        calendarName: 'Outage',
        ...credentials(),
      });
      await settled(destination.id);
      expect(await pushed(destination)).toEqual(await feedAsServed(token));

      // A change that makes the next push write every event anew (free blocks instead of slots): the server
      // stops after the third is written, its answer lost, and refuses the rest.
      const outage = proxy.stopAfterPut(3, () => server.stop());
      await h.feeds.updateOptions(feed.id, { view: 'free', days }, clock().now());
      await outage;
      const failed = await waitFor(
        () => store().get(destination.id),
        (d) => d.state === 'failing',
        { what: 'the push failing' },
      );
      expect(failed.lastError).toMatch(/could not reach the server/);
      expect(failed.pendingChanges).toBeGreaterThan(0);
      // The failure is counted just after its state is recorded: waited for, as the state was.
      const unreachable = await waitFor(
        () => metricValue('caldavFailures', { cause: 'unreachable' }),
        (count) => count >= unreachableBefore + 1,
        { what: 'the failure to be counted' },
      );
      expect(unreachable).toBe(unreachableBefore + 1);

      await server.start();
      clock().set(failed.retryAt!.toISOString());
      const recovered = await settled(destination.id);
      expect(recovered.state).toBe('active');
      const inCalendar = await pushed(destination);
      expect(inCalendar).toEqual(await feedAsServed(token));
      expect(new Set(inCalendar.map((e) => e.uid)).size).toBe(inCalendar.length);

      // The event whose answer was lost is slotfeed's like any: the next change deletes it with the rest.
      await h.feeds.updateOptions(feed.id, { view: 'slots', days }, clock().now());
      await settled(destination.id);
      expect(await pushed(destination)).toEqual(await feedAsServed(token));
    } finally {
      await proxy.close();
    }
  });

  it('refuses a user name with a colon (Basic authentication cannot carry it) before asking the server', async () => {
    const refused = service().add({
      feedId,
      serverUrl: server.baseUrl,
      calendarName: 'Colon',
      username: 'ada:lovelace',
      password: 'irrelevant',
    });
    await expect(refused).rejects.toThrow(InvalidDestinationError);
    await expect(refused).rejects.toThrow('a user name cannot contain ":"');
    expect((await service().list()).some((d) => d.calendarName === 'Colon')).toBe(false);
  });

  it('refuses a destination whose password the server refuses; new wrong credentials stop pushes until replaced', async () => {
    if (!server.checksPasswords) return; // Xandikos has no authentication of its own.
    const wrong = { username: server.username, password: `not-${server.password}` };
    const refused = await service()
      .add({ feedId, serverUrl: server.baseUrl, calendarName: 'Refused', ...wrong })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CalDavCredentialsError);
    expect(JSON.stringify(await service().list())).not.toContain(wrong.password);

    const destination = await service().add({
      feedId,
      serverUrl: server.baseUrl,
      calendarName: 'Password changes',
      ...credentials(),
    });
    await settled(destination.id);
    const refusalsBefore = await metricValue('caldavFailures', { cause: 'credentials' });
    // The password changed on the server's side: slotfeed still holds the old one.
    await store().replaceCredentials(destination.id, wrong, clock().now());
    const stuck = await waitFor(
      () => store().get(destination.id),
      (d) => d.state === 'needs_credentials',
      { what: 'needs_credentials' },
    );
    expect(stuck.retryAt).toBeNull();
    expect(stuck.lastError).not.toContain(wrong.password);

    // Hours later, with a change pending, the dispatcher queues no push for it, and no one can ask for one.
    clock().advance(6 * 3600);
    await store().requestPush(destination.id, clock().now());
    await expect(service().pushNow(destination.id)).rejects.toThrow(/replace them first/);
    await dispatchDuePushes(store(), h.sync.clients.caldavQueue, 3 * 3600_000, clock().now());
    expect(await h.sync.clients.caldavQueue.getJob(caldavJobId(destination.id))).toBeUndefined();
    expect(await store().get(destination.id)).toMatchObject({
      state: 'needs_credentials',
      consecutiveFailures: 1,
      lastPushAt: stuck.lastPushAt,
    });
    expect(await metricValue('caldavFailures', { cause: 'credentials' })).toBe(refusalsBefore + 1);

    // Replaced by wrong ones again: refused, and nothing changes; by right ones: pushed at once.
    await expect(service().replaceCredentials(destination.id, wrong)).rejects.toBeInstanceOf(
      CalDavCredentialsError,
    );
    await service().replaceCredentials(destination.id, credentials());
    const back = await settled(destination.id);
    expect(back.state).toBe('active');
    expect(await pushed(back)).toEqual(await feedAsServed());
  });
});
