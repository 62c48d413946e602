// A person's calendar is theirs (issue 34): each way a review found slotfeed leaving stale events behind for good,
// deleting an event the person made, stopping for good or sending the password elsewhere, reproduced against a
// real Radicale (through a fault-injecting proxy of the test's own where the server must misbehave) and read back
// with an independent client (python3-caldav).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openCalDavAccount } from '../../src/caldav/index.js';
import { caldavCleanupJobId, caldavJobId } from '../../src/destinations/caldav-queue.js';
import type { CaldavDestinationRecord } from '../../src/store/caldav-destinations.js';
import { eventsOf } from '../feeds/feed-fixtures.js';
import {
  addOwnEvent,
  readBack,
  startCalDavServer,
  type CalDavTestServer,
} from '../support/caldav-servers.js';
import type { FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { startFaultProxy, type FaultProxy } from './helpers/fault-proxy.js';
import { patient } from '../support/patience.js';

let server: CalDavTestServer;
let h: WebHarness;
let proxy: FaultProxy;
let connectionId: string;
const clock = () => h.sync.clock as FakeClock;
const service = () => h.sync.services.caldavDestinations;
const store = () => h.sync.stores.caldavDestinations;
const credentials = () => ({ username: server.username, password: server.password });
let calendars = 0;

/** A feed of the connection over a few days (each push stays small), and its token. */
async function smallFeed(view: 'free' | 'slots' = 'free', owner = connectionId) {
  return h.feeds.create({ connectionId: owner, options: { view, days: 4 } });
}

async function feedUids(token: string): Promise<string[]> {
  const response = await h.get(`/feeds/${token}.ics`);
  return eventsOf(response.text)
    .map((event) => event.get('UID')!)
    .sort();
}

async function addDestination(feedId: string, serverUrl = server.baseUrl, calendarName?: string) {
  calendars += 1;
  return service().add({
    feedId,
    serverUrl,
    calendarName: calendarName ?? `Care ${calendars}`,
    ...credentials(),
  });
}

const settled = (destinationId: string) =>
  waitFor(
    () => store().get(destinationId),
    (d) => d.pendingChanges === 0 && d.reconcileRequestedAt === null && d.lastPushAt !== null,
    { what: `destination ${destinationId} pushed` },
  );

const cleanedUp = (destinationId: string) =>
  waitFor(
    async () => (await service().cleanups()).filter((c) => c.id === destinationId),
    (left) => left.length === 0,
    { what: `the cleanup of ${destinationId}` },
  );

/** The caldav job `jobId` queued now has been taken by a worker and has ended (run, or skipped). */
async function jobTaken(jobId: string) {
  const queue = h.sync.clients.caldavQueue;
  const queued = await queue.getJob(jobId);
  if (queued === undefined) return;
  await waitFor(
    () => queue.getJob(jobId),
    (job) => job === undefined || job.timestamp !== queued.timestamp,
    { what: `a worker took the job ${jobId}` },
  );
}

/** The cleanup job queued by the removal of `destinationId` has been taken by a worker (run, or skipped). */
const cleanupTaken = (destinationId: string) => jobTaken(caldavCleanupJobId(destinationId));

/** What the calendar holds, as python3-caldav reads it: slotfeed's events (by UID) and everyone else's. */
async function calendarHolds(destination: Pick<CaldavDestinationRecord, 'calendarUrl'>) {
  const events = await readBack(server, destination.calendarUrl);
  return {
    slotfeeds: events
      .filter((e) => e.marker !== null)
      .map((e) => e.uid)
      .sort(),
    persons: events.filter((e) => e.marker === null),
    all: events,
  };
}

function post(path: string, cookie: string) {
  return h.request('POST', path, {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: h.url,
      cookie,
      accept: 'text/html',
    },
    body: '',
  });
}

beforeAll(async () => {
  server = await startCalDavServer('radicale');
  proxy = await startFaultProxy(server.baseUrl);
  h = await createWebHarness('caldav_care', {
    env: { CALDAV_ALLOW_PRIVATE_TARGETS: 'true', CALDAV_DISPATCH_INTERVAL_MS: '100' },
  });
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  connectionId = connected.connectionId;
  await h.syncNow(connectionId);
  await h.sync.startRoles(['worker']);
}, patient(30_000));
afterAll(async () => {
  await h?.close();
  await proxy?.close();
  await server?.close();
});

/** A calendar's collection, as the hrefs of its listing name it. */
const collectionPath = (calendarUrl: string) => new URL(calendarUrl).pathname;

/**
 * Every listing of the calendar (REPORT) answers with one more item the account may not read: a 403 inside the
 * 207, as a shared calendar holding a colleague's private event does. Returns what takes the fault away.
 */
function forbiddenItemInListings(calendarUrl: string, name: string): () => void {
  return proxy.install((request) =>
    request.method === 'REPORT'
      ? {
          kind: 'rewrite-answer',
          rewrite: (answer) => ({
            ...answer,
            body: Buffer.from(
              answer.body
                .toString('utf8')
                .replace(
                  /<\/(\w+:)?multistatus>/,
                  `<response xmlns="DAV:"><href>${collectionPath(calendarUrl)}${name}</href>` +
                    '<status>HTTP/1.1 403 Forbidden</status></response></$1multistatus>',
                ),
            ),
          }),
        }
      : undefined,
  );
}

describe('1. whatever ends a destination, slotfeed’s events leave the calendar with it', () => {
  it('a person who deletes their data (POST /me/delete) has slotfeed’s events deleted from their calendar, and their own kept; the page said so first', async () => {
    const other = await h.connectViaWeb(h.sync.sim.users[1]!.email);
    await h.syncNow(other.connectionId);
    const feedId = (await h.feeds.findByToken(other.token!))!.id;
    const destination = await addDestination(feedId);
    await settled(destination.id);
    await addOwnEvent(server, destination.calendarUrl, {
      uid: 'own-dentist',
      summary: 'Dentist',
      start: '2026-03-03T10:00:00Z',
      end: '2026-03-03T11:00:00Z',
    });
    expect((await calendarHolds(destination)).slotfeeds.length).toBeGreaterThan(0);

    const page = await h.get('/me', { accept: 'text/html', cookie: other.ownerCookie });
    expect(page.text).toMatch(/deletes the free time it wrote into your calendars/);

    const deleted = await post('/me/delete', other.ownerCookie);
    expect(deleted.status).toBe(303);
    expect(await store().list({ feedId })).toEqual([]);
    await cleanedUp(destination.id);
    const after = await calendarHolds(destination);
    expect(after.slotfeeds).toEqual([]);
    expect(after.persons.map((e) => e.summary)).toEqual(['Dentist']);
  });

  it('a team deleted by the admin takes its team feed’s events out of the calendar', async () => {
    const team = await h.sync.stores.teams.create('care-team');
    await h.sync.stores.teams.addMembers(team.id, [connectionId]);
    const { feed } = await h.feeds.createTeamFeed({ teamId: team.id, options: { mode: 'any', days: 3 } });
    const destination = await addDestination(feed.id);
    await settled(destination.id);
    expect((await calendarHolds(destination)).slotfeeds.length).toBeGreaterThan(0);

    await h.sync.stores.teams.delete(team.id);
    await cleanedUp(destination.id);
    expect((await calendarHolds(destination)).slotfeeds).toEqual([]);
  });

  it('a cleanup whose credentials the server refuses waits for new ones, says so to the owner and the admin, and finishes with them', async () => {
    const { feed } = await smallFeed();
    const destination = await addDestination(feed.id);
    await settled(destination.id);
    const written = (await calendarHolds(destination)).slotfeeds;
    expect(written.length).toBeGreaterThan(0);

    await server.changePassword();
    await service().remove(destination.id);
    const [stuck] = await waitFor(
      async () => (await service().cleanups({ connectionId })).filter((c) => c.id === destination.id),
      (left) => left[0]?.state === 'needs_credentials',
      { what: 'the cleanup refused' },
    );
    expect(stuck!.lastError).toMatch(/credentials were refused/);
    expect(stuck!.lastError).not.toContain(server.password);
    expect((await calendarHolds(destination)).slotfeeds).toEqual(written);
    // Nothing more is tried while it waits, however long.
    clock().advance(6 * 3600);
    expect(await h.sync.stores.caldavCleanups.due(clock().now(), 10)).not.toContain(destination.id);

    await service().replaceCleanupCredentials(destination.id, credentials());
    await cleanedUp(destination.id);
    expect((await calendarHolds(destination)).slotfeeds).toEqual([]);
  });
});

describe('2. removing or pausing a destination while a push writes', () => {
  it('a removal during a push leaves nothing behind: the write that lands after it is deleted with the rest', async () => {
    const { feed, token } = await smallFeed('slots');
    const uids = await feedUids(token);
    expect(uids.length).toBeGreaterThan(3);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const puts = new Promise<void>((resolve) => (reached = resolve));
    let count = 0;
    const removeFault = proxy.install((request) => {
      if (request.method !== 'PUT') return undefined;
      count += 1;
      if (count === 3) reached();
      return count >= 3 ? { kind: 'hold', until: held } : undefined;
    });
    try {
      const destination = await addDestination(feed.id, proxy.url);
      await puts;
      await service().remove(destination.id);
      // The writes stay held until a worker has taken the cleanup job: run beside the push (outside its lock), it
      // would list and delete what was written so far and end before the held writes land.
      await cleanupTaken(destination.id);
      release();
      await cleanedUp(destination.id);
      expect((await calendarHolds(destination)).slotfeeds).toEqual([]);
    } finally {
      release();
      removeFault();
    }
  });

  it('a pause during a push stops it before its next write; resuming writes the rest', async () => {
    const { feed, token } = await smallFeed('slots');
    const uids = await feedUids(token);
    expect(uids.length).toBeGreaterThan(8);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let puts = 0;
    const removeFault = proxy.install((request) => {
      if (request.method !== 'PUT') return undefined;
      puts += 1;
      return { kind: 'hold', until: held };
    });
    let destination: CaldavDestinationRecord;
    try {
      destination = await addDestination(feed.id, proxy.url);
      // Every lane of the push has sent its first write, and waits for the server's answer.
      await waitFor(
        async () => puts,
        (n) => n === 4,
        { what: 'four writes under way' },
      );
      await service().setPaused(destination.id, true);
      release();
      await waitFor(
        async () => (await h.sync.clients.caldavQueue.getJobCounts('active')).active,
        (active) => active === 0,
        { what: 'the push ended' },
      );
      // The writes under way were answered and recorded; none started after the pause.
      expect(puts).toBe(4);
      expect((await store().writtenEvents(destination.id)).size).toBe(4);
      expect((await store().get(destination.id)).state).toBe('paused');
    } finally {
      release();
      removeFault();
    }
    await service().setPaused(destination.id, false);
    await settled(destination.id);
    expect((await calendarHolds(destination)).slotfeeds).toEqual(uids);
  });
});

describe('3. a copy the person made of one of slotfeed’s events', () => {
  it('is neither deleted by reconciliation nor by the removal: it carries the marker but not a UID slotfeed proved', async () => {
    const { feed } = await smallFeed();
    const destination = await addDestination(feed.id);
    await settled(destination.id);
    // As a calendar app duplicates an event: a UID and title of its own, every other property (X- ones too) kept.
    const app = await openCalDavAccount({
      serverUrl: destination.calendarUrl,
      ...credentials(),
      allowPrivateTargets: true,
    });
    const {
      events: [original],
    } = await app.listFeedEvents(destination.calendarUrl, feed.id);
    const copy = original!.icalendar
      .replace(/\r?\n[ \t]/g, '')
      .replace(/^UID:.*$/m, 'UID:copy-made-by-the-person')
      .replace(/^SUMMARY:.*$/m, 'SUMMARY:Lunch with Sam');
    await app.createEvent(destination.calendarUrl, { uid: 'copy-made-by-the-person', icalendar: copy });

    await service().reconcileNow(destination.id);
    await settled(destination.id);
    const reconciled = await calendarHolds(destination);
    expect(reconciled.all.find((e) => e.uid === 'copy-made-by-the-person')).toMatchObject({
      summary: 'Lunch with Sam',
    });

    await service().remove(destination.id);
    await cleanedUp(destination.id);
    expect((await calendarHolds(destination)).all.map((e) => [e.uid, e.summary])).toEqual([
      ['copy-made-by-the-person', 'Lunch with Sam'],
    ]);
  });
});

describe('4. a UID the calendar holds as the person’s event (Radicale answers 409 no-uid-conflict)', () => {
  it('is left alone and said once; the rest is pushed and the destination stays active', async () => {
    const { feed, token } = await smallFeed();
    const uids = await feedUids(token);
    const taken = uids[0]!;
    // The person's calendar holds an event with that UID, at an href of its own (not the one slotfeed would
    // write at): the server refuses slotfeed's create with 409 and CALDAV:no-uid-conflict.
    const app = await openCalDavAccount({
      serverUrl: server.baseUrl,
      ...credentials(),
      allowPrivateTargets: true,
    });
    const calendar = await app.makeCalendar({ displayName: 'Shared with a clash' });
    const ownHref = `${calendar.url}the-persons-own-event.ics`;
    const stored = await fetch(ownHref, {
      method: 'PUT',
      headers: {
        authorization: `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}`,
        'content-type': 'text/calendar; charset=utf-8',
        'if-none-match': '*',
      },
      body: [
        'BEGIN:VCALENDAR',
        'VERSION:2.0',
        'PRODID:-//a calendar app//EN',
        'BEGIN:VEVENT',
        `UID:${taken}`,
        'DTSTAMP:20260302T090000Z',
        'DTSTART:20260305T100000Z',
        'DTEND:20260305T110000Z',
        'SUMMARY:Mine',
        'END:VEVENT',
        'END:VCALENDAR',
        '',
      ].join('\r\n'),
    });
    expect(stored.status).toBe(201);
    // What the server answered each of slotfeed's writes, read as it passes the proxy.
    const answers: { status: number; body: string }[] = [];
    const removeWatch = proxy.install((request) =>
      request.method === 'PUT'
        ? {
            kind: 'rewrite-answer',
            rewrite: (answer) => {
              answers.push({ status: answer.status, body: answer.body.toString('utf8') });
              return answer;
            },
          }
        : undefined,
    );
    let destination: CaldavDestinationRecord;
    let pushed: CaldavDestinationRecord;
    try {
      destination = await addDestination(feed.id, proxy.url, 'Shared with a clash');
      pushed = await settled(destination.id);
    } finally {
      removeWatch();
    }
    expect(new URL(destination.calendarUrl).pathname).toBe(new URL(calendar.url).pathname);
    expect(answers.filter((answer) => answer.status === 409)).toEqual([
      { status: 409, body: expect.stringContaining('no-uid-conflict') },
    ]);
    expect(pushed.state).toBe('active');
    expect(pushed.lastError).toBeNull();
    const holds = await calendarHolds(destination);
    expect(holds.slotfeeds).toEqual(uids.filter((uid) => uid !== taken));
    expect(holds.persons).toEqual([expect.objectContaining({ uid: taken, summary: 'Mine' })]);
    expect(holds.all.filter((e) => e.uid === taken)).toHaveLength(1);

    // Pushed and reconciled again: still left alone, and not said again.
    await service().pushNow(destination.id);
    await settled(destination.id);
    await service().reconcileNow(destination.id);
    await settled(destination.id);
    const conflicts = (await service().log(destination.id)).filter((entry) => entry.kind === 'conflict');
    expect(conflicts).toEqual([expect.objectContaining({ uid: taken })]);
    expect((await calendarHolds(destination)).persons).toEqual([
      expect.objectContaining({ uid: taken, summary: 'Mine' }),
    ]);
  });
});

describe('5. a multistatus with failed items', () => {
  it('an item answered 403 is skipped and logged; the good ones are read and the destination is reconciled', async () => {
    const { feed, token } = await smallFeed();
    const destination = await addDestination(feed.id, proxy.url);
    await settled(destination.id);
    const removeFault = forbiddenItemInListings(destination.calendarUrl, 'hidden.ics');
    try {
      await service().reconcileNow(destination.id);
      const reconciled = await settled(destination.id);
      expect(reconciled.state).toBe('active');
      expect((await service().log(destination.id)).map((e) => e.message)).toEqual(
        expect.arrayContaining([expect.stringMatching(/hidden\.ics \(403\) in its listing: skipped/)]),
      );
    } finally {
      removeFault();
    }
    // Read back past the fault (python3-caldav, like tsdav's calendarQuery, refuses the whole answer for it).
    expect((await calendarHolds(destination)).slotfeeds).toEqual(await feedUids(token));
  });

  it('an answer cut short (507 on the collection, half the items dropped) deletes and forgets nothing', async () => {
    const { feed, token } = await smallFeed();
    const destination = await addDestination(feed.id, proxy.url);
    await settled(destination.id);
    const written = await store().writtenEvents(destination.id);
    const removeFault = proxy.install((request) =>
      request.method === 'REPORT'
        ? {
            kind: 'rewrite-answer',
            rewrite: (answer) => {
              const text = answer.body.toString('utf8');
              const items = text.match(/<(\w+:)?response>[\s\S]*?<\/(\w+:)?response>/g) ?? [];
              let cut = text;
              for (const item of items.slice(0, Math.ceil(items.length / 2))) cut = cut.replace(item, '');
              const truncated = cut.replace(
                /<\/(\w+:)?multistatus>/,
                `<response xmlns="DAV:"><href>${collectionPath(destination.calendarUrl)}</href>` +
                  '<status>HTTP/1.1 507 Insufficient Storage</status></response></$1multistatus>',
              );
              return { ...answer, body: Buffer.from(truncated) };
            },
          }
        : undefined,
    );
    try {
      await service().reconcileNow(destination.id);
      const reconciled = await settled(destination.id);
      expect(reconciled.state).toBe('active');
      expect((await service().log(destination.id)).map((e) => e.message)).toEqual(
        expect.arrayContaining([expect.stringMatching(/incomplete: nothing was deleted/)]),
      );
      expect([...(await store().writtenEvents(destination.id)).keys()].sort()).toEqual(
        [...written.keys()].sort(),
      );
    } finally {
      removeFault();
    }
    // Each event once, as the feed shows it, on the server itself.
    const holds = await calendarHolds(destination);
    expect(holds.slotfeeds).toEqual(await feedUids(token));
    expect(new Set(holds.slotfeeds).size).toBe(holds.slotfeeds.length);
  });
});

describe('6. the password stays with the server’s own site', () => {
  it('a /.well-known/caldav redirect to another origin is not followed: that host never sees the credentials', async () => {
    const elsewhere = await startFaultProxy(server.baseUrl);
    const carried: string[] = [];
    elsewhere.install((request) => {
      if (request.headers.authorization !== undefined) carried.push(`${request.method} ${request.path}`);
      return undefined;
    });
    // The typed server (127.0.0.1) sends discovery on to localhost: another host, with no registrable domain.
    const otherOrigin = elsewhere.url.replace('127.0.0.1', 'localhost');
    const removeFault = proxy.install((request) =>
      request.path.startsWith('/.well-known/caldav')
        ? { kind: 'answer', status: 301, headers: { location: otherOrigin } }
        : undefined,
    );
    try {
      const { feed } = await smallFeed();
      const destination = await addDestination(feed.id, proxy.url);
      expect(new URL(destination.calendarUrl).origin).toBe(new URL(proxy.url).origin);
      await settled(destination.id);
      expect(carried).toEqual([]);
      expect(elsewhere.requests()).toEqual([]);
    } finally {
      removeFault();
      await elsewhere.close();
    }
  });
});

describe('7. a cleanup ends, and its backoff grows', () => {
  const cleanupRow = (id: string) => h.sync.db.prisma.caldavCleanup.findUnique({ where: { id } });
  /** The next attempt of the cleanup `id` once it has made `attempts`: its backoff, in seconds from now. */
  const attemptMade = async (id: string, attempts: number) => {
    const cleanup = await waitFor(
      () => h.sync.stores.caldavCleanups.find(id),
      (c) => c === null || c.attempts >= attempts,
      { what: `attempt ${attempts} of the cleanup ${id}` },
    );
    expect(cleanup?.attempts).toBe(attempts);
    return cleanup!;
  };
  /** The calendar on the server itself, past the proxy's faults. */
  const direct = (destination: CaldavDestinationRecord) => ({
    calendarUrl: destination.calendarUrl.replace(new URL(proxy.url).origin, new URL(server.baseUrl).origin),
  });
  const waitOf = (cleanup: { retryAt: Date | null }) =>
    cleanup.retryAt === null ? null : (cleanup.retryAt.getTime() - clock().now().getTime()) / 1000;

  it('a shared calendar whose listing always holds an item the account may not read (a 403 in the 207): the cleanup deletes slotfeed’s events and ends, its sealed password with it', async () => {
    const { feed } = await smallFeed();
    const destination = await addDestination(feed.id, proxy.url);
    const removeFault = forbiddenItemInListings(destination.calendarUrl, 'colleague.ics');
    try {
      await settled(destination.id);
      expect((await calendarHolds(direct(destination))).slotfeeds.length).toBeGreaterThan(0);
      expect(await cleanupRow(destination.id)).toBeNull();

      await service().remove(destination.id);
      // Its first try ends it (today's code tried again every 30 s for good, the password kept).
      const left = await waitFor(
        () => h.sync.stores.caldavCleanups.find(destination.id),
        (c) => c === null || c.attempts > 0,
        { what: 'the first try of the cleanup' },
      );
      expect(left).toBeNull();
      expect(await cleanupRow(destination.id)).toBeNull();
      expect((await calendarHolds(direct(destination))).slotfeeds).toEqual([]);
    } finally {
      removeFault();
    }
  });

  it('retries back off, doubling up to the cap; new credentials start again from the shortest', async () => {
    const { feed } = await smallFeed();
    const destination = await addDestination(feed.id, proxy.url);
    await settled(destination.id);
    // The person edits each event as slotfeed deletes it: every DELETE is answered 412.
    const removeChanged = proxy.install((request) =>
      request.method === 'DELETE' ? { kind: 'answer', status: 412 } : undefined,
    );
    let removeRefused: (() => void) | undefined;
    try {
      await service().remove(destination.id);
      const waits: (number | null)[] = [];
      for (let attempt = 1; attempt <= 9; attempt++) {
        const cleanup = await attemptMade(destination.id, attempt);
        waits.push(waitOf(cleanup));
        if (attempt < 9) clock().advance(waitOf(cleanup)!);
      }
      expect(waits).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
      expect((await calendarHolds(direct(destination))).slotfeeds.length).toBeGreaterThan(0);

      // The server refuses the password now: the cleanup waits for a person.
      removeRefused = proxy.install((request) =>
        request.method === 'REPORT' ? { kind: 'answer', status: 401 } : undefined,
      );
      clock().advance(3600);
      const refused = await attemptMade(destination.id, 10);
      expect(refused.state).toBe('needs_credentials');
      removeRefused();
      await service().replaceCleanupCredentials(destination.id, credentials());
      const again = await attemptMade(destination.id, 1);
      expect(waitOf(again)).toBe(30);
    } finally {
      removeRefused?.();
      removeChanged();
    }
    await service().abandonCleanup(destination.id);
    expect(await cleanupRow(destination.id)).toBeNull();
  });
});

describe('8. a cleanup and a new destination for the same calendar', () => {
  it('the app password changed, the destination removed, the same calendar added again with the new password, then the waiting cleanup given it: the calendar ends holding the feed, and the new destination said it waited', async () => {
    const { feed, token } = await smallFeed();
    const first = await addDestination(feed.id);
    await settled(first.id);
    const uids = await feedUids(token);
    expect((await calendarHolds(first)).slotfeeds).toEqual(uids);

    await server.changePassword();
    await service().remove(first.id);
    await waitFor(
      () => service().cleanup(first.id),
      (cleanup) => cleanup?.state === 'needs_credentials',
      { what: 'the cleanup refused' },
    );
    // The same calendar for the same feed, with the new password (the calendar found by its name).
    const second = await service().add({
      feedId: feed.id,
      serverUrl: server.baseUrl,
      calendarName: first.calendarName,
      ...credentials(),
    });
    expect(second.calendarUrl).toBe(first.calendarUrl);
    // Asked to push now while it waits: it writes nothing, nor takes over what the cleanup is to delete.
    await service().pushNow(second.id);
    await jobTaken(caldavJobId(second.id));
    expect((await store().get(second.id)).lastPushAt).toBeNull();
    expect(await store().writtenEvents(second.id)).toEqual(new Map());
    // The page asks for the new password for the waiting cleanup, and the person gives it.
    await service().replaceCleanupCredentials(first.id, credentials());
    await cleanedUp(first.id);

    const pushed = await settled(second.id);
    expect(pushed.state).toBe('active');
    expect((await calendarHolds(second)).slotfeeds).toEqual(uids);
    expect((await service().log(second.id)).map((entry) => entry.message)).toEqual(
      expect.arrayContaining([expect.stringMatching(/waits until slotfeed has deleted the events/)]),
    );
  });
});
