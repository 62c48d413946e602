// slotfeed's CalDAV client against real servers (Radicale and Xandikos, from Debian's packages), each read back by
// an independent client (python3-caldav): what a person opening their calendar app would see.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { inspect } from 'node:util';
import {
  CalDavCredentialsError,
  CalDavNotSupportedError,
  CalDavPreconditionError,
  CalDavUnreachableError,
  FEED_MARKER_PROPERTY,
  openCalDavAccount,
  type CalDavAccount,
  type CalDavAccountOptions,
} from '../../src/caldav/index.js';
import {
  addOwnEvent,
  readBack,
  startCalDavServer,
  type CalDavServerKind,
  type CalDavTestServer,
} from '../support/caldav-servers.js';
import { patient } from '../support/patience.js';

function freeEvent(input: { uid: string; feedId: string; start: string; end: string; summary?: string }) {
  const stamp = (iso: string) => iso.replace(/[-:]/g, '').replace(/\.\d+/, '');
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//slotfeed//tests//EN',
    'BEGIN:VEVENT',
    `UID:${input.uid}`,
    'DTSTAMP:20260301T000000Z',
    `DTSTART:${stamp(input.start)}`,
    `DTEND:${stamp(input.end)}`,
    `SUMMARY:${input.summary ?? 'Free'}`,
    'TRANSP:TRANSPARENT',
    `${FEED_MARKER_PROPERTY}:${input.feedId}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

const SERVERS: { kind: CalDavServerKind; checksPasswords: boolean }[] = [
  { kind: 'radicale', checksPasswords: true },
  { kind: 'xandikos', checksPasswords: false },
];

describe.each(SERVERS)('CalDAV client against $kind', ({ kind, checksPasswords }) => {
  let server: CalDavTestServer;
  let account: CalDavAccount;
  let calendarUrl: string;
  const options = (): CalDavAccountOptions => ({
    serverUrl: server.baseUrl,
    username: server.username,
    password: server.password,
    allowPrivateTargets: true,
    timeoutMs: 10_000,
  });

  beforeAll(async () => {
    server = await startCalDavServer(kind);
    account = await openCalDavAccount(options());
    calendarUrl = (await account.makeCalendar({ displayName: 'Free time (slotfeed)' })).url;
  }, patient(60_000));

  afterAll(async () => {
    await server?.close();
  });

  it('finds the calendar home from the server base URL (well-known, principal, home set)', async () => {
    expect(account.homeUrl).toBe(server.homeUrl);
    expect(account.calendarUrl).toBeUndefined();
  });

  it('makes a calendar with MKCALENDAR, listed with its name as accepting events', async () => {
    const made = await account.makeCalendar({ displayName: 'Team availability' });
    expect(made.url.startsWith(server.homeUrl)).toBe(true);
    expect(made).toMatchObject({ displayName: 'Team availability', acceptsEvents: true });
    const calendars = await account.listCalendars();
    expect(calendars).toContainEqual(made);
    expect(calendars.map((c) => c.url)).toContain(calendarUrl);
    // The independent client finds it too, empty.
    expect(await readBack(server, made.url)).toEqual([]);
  });

  it('opened on a calendar URL itself: lists that calendar, and says MKCALENDAR is not possible there', async () => {
    const direct = await openCalDavAccount({ ...options(), serverUrl: calendarUrl });
    expect(direct.calendarUrl).toBe(calendarUrl);
    expect(await direct.listCalendars()).toEqual([
      { url: calendarUrl, displayName: 'Free time (slotfeed)', acceptsEvents: true },
    ]);
    const refused = await direct.makeCalendar({ displayName: 'Another' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CalDavNotSupportedError);
    expect((refused as Error).message).toMatch(/calendar's own URL/);
  });

  it('creates an event once (If-None-Match: *): a second create of the same UID is a precondition error', async () => {
    const event = { uid: 'free-create@slotfeed', feedId: 'feed-create' };
    const created = await account.createEvent(calendarUrl, {
      uid: event.uid,
      icalendar: freeEvent({ ...event, start: '2026-04-01T09:00:00Z', end: '2026-04-01T10:00:00Z' }),
    });
    expect(created.href.startsWith(calendarUrl)).toBe(true);
    expect(created.etag).toMatch(/\S/);
    const again = await account
      .createEvent(calendarUrl, {
        uid: event.uid,
        icalendar: freeEvent({ ...event, start: '2026-04-01T11:00:00Z', end: '2026-04-01T12:00:00Z' }),
      })
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(CalDavPreconditionError);
    expect(await readBack(server, calendarUrl)).toContainEqual({
      href: created.href,
      uid: event.uid,
      summary: 'Free',
      dtstart: '2026-04-01T09:00:00Z',
      dtend: '2026-04-01T10:00:00Z',
      marker: event.feedId,
    });
  });

  it('changes an event with its ETag; a stale ETag is a precondition error and changes nothing', async () => {
    const event = { uid: 'free-change@slotfeed', feedId: 'feed-change' };
    const created = await account.createEvent(calendarUrl, {
      uid: event.uid,
      icalendar: freeEvent({ ...event, start: '2026-04-02T09:00:00Z', end: '2026-04-02T10:00:00Z' }),
    });
    const changed = await account.updateEvent({
      href: created.href,
      etag: created.etag,
      icalendar: freeEvent({ ...event, start: '2026-04-02T13:00:00Z', end: '2026-04-02T15:30:00Z' }),
    });
    expect(changed.href).toBe(created.href);
    expect(changed.etag).not.toBe(created.etag);
    const mine = (await readBack(server, calendarUrl)).find((e) => e.uid === event.uid);
    expect(mine).toMatchObject({ dtstart: '2026-04-02T13:00:00Z', dtend: '2026-04-02T15:30:00Z' });

    const stale = await account
      .updateEvent({
        href: created.href,
        etag: created.etag,
        icalendar: freeEvent({ ...event, start: '2026-04-02T17:00:00Z', end: '2026-04-02T18:00:00Z' }),
      })
      .catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(CalDavPreconditionError);
    const still = (await readBack(server, calendarUrl)).find((e) => e.uid === event.uid);
    expect(still).toMatchObject({ dtstart: '2026-04-02T13:00:00Z', dtend: '2026-04-02T15:30:00Z' });
  });

  it('deletes an event with its ETag; a stale ETag is a precondition error and deletes nothing', async () => {
    const event = { uid: 'free-delete@slotfeed', feedId: 'feed-delete' };
    const times = { start: '2026-04-03T09:00:00Z', end: '2026-04-03T10:00:00Z' };
    const created = await account.createEvent(calendarUrl, {
      uid: event.uid,
      icalendar: freeEvent({ ...event, ...times }),
    });
    const changed = await account.updateEvent({
      ...created,
      icalendar: freeEvent({ ...event, ...times, summary: 'Free (2 kinds)' }),
    });
    const stale = await account.deleteEvent(created).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(CalDavPreconditionError);
    expect((await readBack(server, calendarUrl)).map((e) => e.uid)).toContain(event.uid);

    await account.deleteEvent(changed);
    expect((await readBack(server, calendarUrl)).map((e) => e.uid)).not.toContain(event.uid);
  });

  it("lists only its feed's marked events (not a person's own, not another feed's), and never touches the rest", async () => {
    const listed = await openCalDavAccount(options());
    const cal = (await listed.makeCalendar({ displayName: 'Listing' })).url;
    await addOwnEvent(server, cal, {
      uid: 'dentist-1',
      summary: 'Dentist',
      start: '2026-04-04T09:00:00Z',
      end: '2026-04-04T10:00:00Z',
    });
    const ours = [];
    for (const [i, start] of ['2026-04-04T11:00:00Z', '2026-04-05T11:00:00Z'].entries()) {
      const uid = `free-list-${i}@slotfeed`;
      const icalendar = freeEvent({ uid, feedId: 'feed-a', start, end: start.replace('T11', 'T12') });
      ours.push({ uid, icalendar, ...(await listed.createEvent(cal, { uid, icalendar })) });
    }
    // A feed whose id starts with this one's: a substring match (CalDAV's text-match) would take it for ours.
    await listed.createEvent(cal, {
      uid: 'free-other@slotfeed',
      icalendar: freeEvent({
        uid: 'free-other@slotfeed',
        feedId: 'feed-ab',
        start: '2026-04-06T11:00:00Z',
        end: '2026-04-06T12:00:00Z',
      }),
    });

    const { events: found, complete } = await listed.listFeedEvents(cal, 'feed-a');
    expect(complete).toBe(true);
    expect(found.map((e) => e.uid).sort()).toEqual(ours.map((e) => e.uid).sort());
    for (const event of found) {
      const mine = ours.find((e) => e.uid === event.uid);
      expect(event).toMatchObject({ href: mine?.href, etag: mine?.etag });
      expect(event.icalendar).toContain(`${FEED_MARKER_PROPERTY}:feed-a`);
    }
    expect((await listed.listFeedEvents(cal, 'feed-ab')).events.map((e) => e.uid)).toEqual([
      'free-other@slotfeed',
    ]);
    expect((await listed.listFeedEvents(cal, 'feed-none')).events).toEqual([]);

    // Clearing the feed's events (what a push does when the feed is removed) leaves the person's own event be.
    for (const event of found) await listed.deleteEvent(event);
    expect(await readBack(server, cal)).toEqual([
      {
        href: expect.any(String),
        uid: 'dentist-1',
        summary: 'Dentist',
        dtstart: '2026-04-04T09:00:00Z',
        dtend: '2026-04-04T10:00:00Z',
        marker: null,
      },
      expect.objectContaining({ uid: 'free-other@slotfeed', marker: 'feed-ab' }),
    ]);
  });

  it('reads the ETag back when the server sends none with the PUT', async () => {
    const withoutEtags: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method !== 'PUT') return response;
      const headers = new Headers(response.headers);
      headers.delete('etag');
      const body = [204, 205, 304].includes(response.status) ? null : await response.arrayBuffer();
      return new Response(body, { status: response.status, headers });
    };
    const quiet = await openCalDavAccount({ ...options(), fetch: withoutEtags });
    const event = { uid: 'free-no-etag@slotfeed', feedId: 'feed-no-etag' };
    const created = await quiet.createEvent(calendarUrl, {
      uid: event.uid,
      icalendar: freeEvent({ ...event, start: '2026-04-07T09:00:00Z', end: '2026-04-07T10:00:00Z' }),
    });
    expect(created.etag).toMatch(/\S/);
    const changed = await quiet.updateEvent({
      ...created,
      icalendar: freeEvent({ ...event, start: '2026-04-07T10:00:00Z', end: '2026-04-07T11:00:00Z' }),
    });
    expect(changed.etag).toMatch(/\S/);
    expect(changed.etag).not.toBe(created.etag);
    const {
      events: [listed],
    } = await quiet.listFeedEvents(calendarUrl, event.feedId);
    expect(listed?.etag).toBe(changed.etag);
  });

  if (checksPasswords) {
    it('a wrong password is the credentials error, and the password is nowhere in it', async () => {
      const wrong = `not-${server.password}-at-all`;
      const refused = await openCalDavAccount({ ...options(), password: wrong }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(CalDavCredentialsError);
      expect((refused as CalDavCredentialsError).status).toBe(401);
      const everything = `${inspect(refused, { depth: 5 })} ${JSON.stringify(refused)}`;
      expect(everything).not.toContain(wrong);
      expect(everything).not.toContain(Buffer.from(`${server.username}:${wrong}`).toString('base64'));
    });
  } else {
    it('has no authentication of its own: a wrong password opens the account as well', async () => {
      const opened = await openCalDavAccount({ ...options(), password: 'anything' });
      expect(opened.homeUrl).toBe(server.homeUrl);
    });
  }

  it('a stopped server is "unreachable" (retryable); started again, the same account carries on', async () => {
    await server.stop();
    try {
      const down = await account.listCalendars().catch((e: unknown) => e);
      expect(down).toBeInstanceOf(CalDavUnreachableError);
      expect((down as CalDavUnreachableError).retryable).toBe(true);
    } finally {
      await server.start();
    }
    expect((await account.listCalendars()).map((c) => c.url)).toContain(calendarUrl);
  });
});
