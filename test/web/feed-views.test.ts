// What a subscriber sees, end to end (simulator → sync → served feed): free time once instead of stacked
// offers, secret event types kept out, changes that calendars notice (SEQUENCE, DTSTAMP, LAST-MODIFIED), a cap
// that counts what is shown, and validators that move whenever the bytes do.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildWebApp } from '../../src/web/app.js';
import { eventsOf, calendarLines } from '../feeds/feed-fixtures.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import type { FakeClock } from '../support/sync-harness.js';
import { simUser } from '../support/sync-truth.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let connectionId: string;
let userId: string;
/** The connection's default feed (free time) and a slots feed of all its event types. */
let freeToken: string;
let slotsToken: string;

const clock = () => h.sync.clock as FakeClock;

async function ics(token: string): Promise<string> {
  const response = await h.get(`/feeds/${token}.ics`);
  expect(response.status).toBe(200);
  assertStrictIcs(response.text);
  return response.text;
}

const unescaped = (value: string | undefined) =>
  (value ?? '').replace(/\\n/g, '\n').replace(/\\([,;\\])/g, '$1');

function eventTypeNamed(title: string) {
  const eventType = simUser(h.sync.sim, h.sync.sim.users[0]!.email).event_types.find(
    (e) => e.title === title,
  );
  if (!eventType) throw new Error(`user 0 has no event type ${title}`);
  return eventType;
}

beforeAll(async () => {
  h = await createWebHarness('web_feed_views');
  const email = h.sync.sim.users[0]!.email;
  userId = simUser(h.sync.sim, email).id;
  const connected = await h.connectViaWeb(email);
  freeToken = connected.token!;
  connectionId = connected.connectionId;
  slotsToken = (await h.feeds.create({ connectionId, options: { view: 'slots' } })).token;
  await h.syncNow(connectionId);
});
afterAll(async () => {
  await h?.close();
});

describe('the default feed shows free time, once', () => {
  it('has no two events at the same instant, where the slots view stacks one offer per event type', async () => {
    const slots = eventsOf(await ics(slotsToken));
    const slotStarts = slots.map((e) => e.get('DTSTART'));
    // The finding: one person, several event types, several events starting together.
    expect(new Set(slotStarts).size).toBeLessThan(slotStarts.length);

    const free = eventsOf(await ics(freeToken));
    expect(free.length).toBeGreaterThan(0);
    expect(free.length).toBeLessThan(slots.length);
    for (let i = 1; i < free.length; i++) {
      // Maximal blocks: the next one starts strictly after this one ends (touching blocks would be one).
      expect(free[i]!.get('DTSTART')! > free[i - 1]!.get('DTEND')!).toBe(true);
    }
    expect(new Set(free.map((e) => e.get('SUMMARY')))).toEqual(new Set(['Free']));
    expect(free.every((e) => e.get('TRANSP') === 'TRANSPARENT')).toBe(true);
  });

  it('says in each block what can be booked inside it, with each booking link', async () => {
    const intro = eventTypeNamed('Intro call');
    const free = eventsOf(await ics(freeToken));
    const withIntro = free.filter((e) => unescaped(e.get('DESCRIPTION')).includes('Intro call (30 min)'));
    expect(withIntro.length).toBeGreaterThan(0);
    expect(unescaped(withIntro[0]!.get('DESCRIPTION'))).toContain(`Intro call (30 min): ${intro.url}`);
  });
});

describe('secret and disabled event types', () => {
  it('keeps a secret event type out of every feed of all event types, and shows it where a feed names it', async () => {
    const secret = eventTypeNamed('Private 1:1');
    expect(secret.is_secret).toBe(true);
    for (const token of [freeToken, slotsToken]) {
      const text = (await ics(token)).replace(/\r\n[ \t]/g, '');
      expect(text).not.toContain('Private 1:1');
      expect(text).not.toContain(secret.url!);
    }
    const named = await h.feeds.create({ connectionId, upstreamEventId: secret.event_id });
    const namedEvents = eventsOf(await ics(named.token));
    expect(namedEvents.length).toBeGreaterThan(0);
    expect(unescaped(namedEvents[0]!.get('DESCRIPTION'))).toContain(secret.url!);
  });

  it('never shows a disabled event type, even in a feed that names it', async () => {
    const retired = eventTypeNamed('Old workshop');
    expect(retired.enabled).toBe(false);
    const named = await h.feeds.create({ connectionId, upstreamEventId: retired.event_id });
    expect(eventsOf(await ics(named.token))).toEqual([]);
  });
});

describe('changes calendars notice', () => {
  /** The first event of the slots feed of one event type, and the free block holding its start. */
  async function eventsOfType(eventTitle: string) {
    const slots = eventsOf(await ics(slotsToken)).filter((e) => e.get('SUMMARY') === eventTitle);
    const free = eventsOf(await ics(freeToken));
    const first = slots[0]!;
    const block = free.find(
      (e) => e.get('DTSTART')! <= first.get('DTSTART')! && first.get('DTSTART')! < e.get('DTEND')!,
    )!;
    return { slot: first, block };
  }

  async function changeAndSync(eventId: string, patch: Record<string, unknown>) {
    h.sync.sim.control.updateEventType(userId, eventId, patch);
    clock().advance(60);
    await h.syncNow(connectionId);
  }

  const expectRevised = (before: Map<string, string>, after: Map<string, string>) => {
    expect(after.get('UID')).toBe(before.get('UID'));
    expect(Number(after.get('SEQUENCE'))).toBeGreaterThan(Number(before.get('SEQUENCE')));
    expect(after.get('DTSTAMP')! > before.get('DTSTAMP')!).toBe(true);
    expect(after.get('LAST-MODIFIED')! > before.get('LAST-MODIFIED')!).toBe(true);
    expect(after.get('DTSTAMP')).toBe(after.get('LAST-MODIFIED'));
  };

  it('a rename moves SEQUENCE, DTSTAMP and LAST-MODIFIED of the slots and of the blocks that list it', async () => {
    const intro = eventTypeNamed('Intro call');
    const before = await eventsOfType('Intro call');
    await changeAndSync(intro.event_id, { title: 'Intro chat' });
    const after = await eventsOfType('Intro chat');
    expect(after.slot.get('DTSTART')).toBe(before.slot.get('DTSTART'));
    expectRevised(before.slot, after.slot);
    expect(unescaped(after.block.get('DESCRIPTION'))).toContain('Intro chat');
    expectRevised(before.block, after.block);
  });

  it('a new colour moves the slot events that show it', async () => {
    const intro = eventTypeNamed('Intro chat');
    const before = await eventsOfType('Intro chat');
    await changeAndSync(intro.event_id, { color: '#ff0000' });
    const after = await eventsOfType('Intro chat');
    expect(after.slot.get('COLOR')).toBe('red');
    expect(after.slot.get('COLOR')).not.toBe(before.slot.get('COLOR'));
    expectRevised(before.slot, after.slot);
  });

  it('a new booking link moves slots and blocks', async () => {
    const intro = eventTypeNamed('Intro chat');
    const before = await eventsOfType('Intro chat');
    await changeAndSync(intro.event_id, { url: 'https://book.calendbook.test/new-intro-link' });
    const after = await eventsOfType('Intro chat');
    expect(after.slot.get('URL;VALUE=URI')).toBe('https://book.calendbook.test/new-intro-link');
    expectRevised(before.slot, after.slot);
    expect(unescaped(after.block.get('DESCRIPTION'))).toContain('new-intro-link');
    expectRevised(before.block, after.block);
  });

  it('a slot whose end moved rises in SEQUENCE and gets a new DTSTAMP', async () => {
    const intro = eventTypeNamed('Intro chat');
    const slotsOfIntro = async () =>
      eventsOf(await ics(slotsToken)).filter((e) => e.get('SUMMARY') === 'Intro chat');
    const before = new Map((await slotsOfIntro()).map((e) => [e.get('UID'), e]));
    await changeAndSync(intro.event_id, { duration_minutes: 60 });
    // A slot still offered at the same start (same UID) now ends later.
    const kept = (await slotsOfIntro()).filter((e) => before.has(e.get('UID')));
    expect(kept.length).toBeGreaterThan(0);
    for (const after of kept) {
      const earlier = before.get(after.get('UID'))!;
      expect(after.get('DTEND')! > earlier.get('DTEND')!).toBe(true);
      expectRevised(earlier, after);
    }
  });

  it('an unchanged feed is byte-identical across fetches and syncs, and its events keep their revisions', async () => {
    const first = await h.get(`/feeds/${freeToken}.ics`);
    clock().advance(60);
    await h.syncNow(connectionId);
    const second = await h.get(`/feeds/${freeToken}.ics`);
    expect(second.body.equals(first.body)).toBe(true);
    const slotsFirst = await h.get(`/feeds/${slotsToken}.ics`);
    const slotsSecond = await h.get(`/feeds/${slotsToken}.ics`);
    expect(slotsSecond.body.equals(slotsFirst.body)).toBe(true);
  });
});

describe('validators that never lie', () => {
  it('If-Modified-Since alone gets the new body after local midnight, with no sync in between', async () => {
    const before = await h.get(`/feeds/${freeToken}.ics`);
    const lastModified = before.headers['last-modified']!;
    expect((await h.get(`/feeds/${freeToken}.ics`, { 'if-modified-since': lastModified })).status).toBe(304);

    // Past the next midnight in the account's zone: the window moved, the bytes with it.
    clock().advance(24 * 3600);
    const after = await h.get(`/feeds/${freeToken}.ics`, { 'if-modified-since': lastModified });
    expect(after.status).toBe(200);
    expect(after.body.equals(before.body)).toBe(false);
    expect(Date.parse(after.headers['last-modified']!)).toBeGreaterThan(Date.parse(lastModified));
    await h.syncNow(connectionId);
  });

  it('If-Modified-Since alone gets the new body after the connection is disabled', async () => {
    const before = await h.get(`/feeds/${freeToken}.ics`);
    const lastModified = before.headers['last-modified']!;
    clock().advance(60);
    const disabled = await h.sync.db.prisma.connection.update({
      where: { id: connectionId },
      data: { status: 'disabled' },
    });
    await h.deps.feedChanges.caughtUp();
    const after = await h.get(`/feeds/${freeToken}.ics`, { 'if-modified-since': lastModified });
    expect(disabled.status).toBe('disabled');
    expect(after.status).toBe(200);
    expect(after.text.replace(/\r\n[ \t]/g, '')).toContain('this feed is no longer updated');
    expect(Date.parse(after.headers['last-modified']!)).toBeGreaterThan(Date.parse(lastModified));
    await h.sync.db.prisma.connection.update({ where: { id: connectionId }, data: { status: 'active' } });
  });

  /** The owner's "Shows" form on /me, as the page posts it. */
  async function showOnMe(cookie: string, feedId: string, view: string) {
    const changed = await h.request('POST', `/me/feeds/${feedId}/view`, {
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: h.url,
        cookie,
        accept: 'text/html',
      },
      body: new URLSearchParams({ view }).toString(),
    });
    expect(changed.status).toBe(303);
  }

  // Another account, synced on the test's clock only: the tests above moved the first one's Last-Modified
  // with the database's clock (an UPDATE typed by hand), which this test's clock cannot pass.
  let other: { token: string; cookie: string; feedId: string };
  beforeAll(async () => {
    const connected = await h.connectViaWeb(h.sync.sim.users[1]!.email);
    await h.syncNow(connected.connectionId);
    const token = connected.token!;
    other = { token, cookie: connected.ownerCookie, feedId: (await h.feeds.findByToken(token))!.id };
  });

  it('If-Modified-Since alone gets the new view after the owner changes what the feed shows, and back', async () => {
    const free = await h.get(`/feeds/${other.token}.ics`);
    const freeModified = free.headers['last-modified']!;
    expect((await h.get(`/feeds/${other.token}.ics`, { 'if-modified-since': freeModified })).status).toBe(
      304,
    );

    clock().advance(60);
    await showOnMe(other.cookie, other.feedId, 'busy');
    const busy = await h.get(`/feeds/${other.token}.ics`, { 'if-modified-since': freeModified });
    expect(busy.status).toBe(200);
    expect(busy.text).toContain('X-WR-CALDESC:Busy time');
    expect(Date.parse(busy.headers['last-modified']!)).toBeGreaterThan(Date.parse(freeModified));

    // Back to free time: a client that has the busy view must not be told its copy is current (the free
    // view's bytes rendered before were last modified earlier than the busy view it holds).
    clock().advance(60);
    await showOnMe(other.cookie, other.feedId, 'free');
    const freeAgain = await h.get(`/feeds/${other.token}.ics`, {
      'if-modified-since': busy.headers['last-modified']!,
    });
    expect(freeAgain.status).toBe(200);
    expect(freeAgain.text).toContain('X-WR-CALDESC:Free time of');
    expect(Date.parse(freeAgain.headers['last-modified']!)).toBeGreaterThan(
      Date.parse(busy.headers['last-modified']!),
    );
  });

  it('If-Modified-Since alone gets a feed’s free/busy for its new days after they change', async () => {
    const feed = await h.feeds.get(other.feedId);
    const before = await h.get(`/freebusy/${other.token}.ifb`);
    const lastModified = before.headers['last-modified']!;
    expect((await h.get(`/freebusy/${other.token}.ifb`, { 'if-modified-since': lastModified })).status).toBe(
      304,
    );
    clock().advance(60);
    await h.feeds.updateOptions(feed.id, { ...feed.options, days: 3 }, clock().now());
    await h.deps.feedChanges.caughtUp();
    const after = await h.get(`/freebusy/${other.token}.ifb`, { 'if-modified-since': lastModified });
    expect(after.status).toBe(200);
    expect(after.text).not.toBe(before.text);
    expect(Date.parse(after.headers['last-modified']!)).toBeGreaterThan(Date.parse(lastModified));
  });
});

describe('caps count what is shown', () => {
  it('cuts the merged feed after merging, and says so in the calendar description', async () => {
    const full = eventsOf(await ics(freeToken));
    const cap = 5;
    expect(full.length).toBeGreaterThan(cap);
    const app = await buildWebApp({ ...h.deps, settings: { ...h.deps.settings, feedMaxEvents: cap } });
    try {
      const response = await app.inject({ url: `/feeds/${freeToken}.ics` });
      assertStrictIcs(response.body);
      const capped = eventsOf(response.body);
      const span = (e: Map<string, string>) => `${e.get('DTSTART')}–${e.get('DTEND')}`;
      // The first blocks whole, not the first raw slots merged (which would cut a block short).
      expect(capped.map(span)).toEqual(full.slice(0, cap).map(span));
      const description = calendarLines(response.body).find((line) => line.startsWith('X-WR-CALDESC:'));
      expect(description).toContain(`Showing the first ${cap} of ${full.length} events`);
    } finally {
      await app.close();
    }
  });
});

describe('busy time', () => {
  it('a booked slot shows as one opaque Busy block in the busy views, never overlapping free time', async () => {
    const busyToken = (await h.feeds.create({ connectionId, options: { view: 'busy' } })).token;
    const bothToken = (await h.feeds.create({ connectionId, options: { view: 'free+busy' } })).token;
    // Earlier tests here booked slots too: this one looks for the one busy block its booking adds.
    const before = eventsOf(await ics(busyToken));

    // A slot of an enabled event type (earlier tests here rename and disable event types), a day ahead.
    const enabled = await h.sync.db.prisma.eventType.findMany({
      where: { connectionId, validTo: null, enabled: true },
    });
    const booked = (await h.sync.db.prisma.slot.findFirst({
      where: {
        connectionId,
        goneAt: null,
        upstreamEventId: { in: enabled.map((e) => e.upstreamEventId) },
        startsAt: { gt: new Date(clock().now().getTime() + 24 * 3600_000) },
      },
      orderBy: { startsAt: 'asc' },
    }))!;
    h.sync.sim.control.book(booked.upstreamEventId, booked.startsAt.toISOString());
    clock().advance(600);
    await h.syncNow(connectionId);

    const busy = eventsOf(await ics(busyToken));
    expect(busy.length).toBeGreaterThan(before.length);
    expect(busy.every((e) => e.get('TRANSP') === 'OPAQUE' && e.get('SUMMARY') === 'Busy')).toBe(true);
    expect(busy.every((e) => e.get('X-MICROSOFT-CDO-BUSYSTATUS') === 'BUSY' && !e.has('DESCRIPTION'))).toBe(
      true,
    );
    // The booked slot lies inside a busy block (a booking also closes other event types' slots at that time).
    const stamp = (d: Date) =>
      d
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d{3}/, '');
    expect(
      busy.some(
        (e) => e.get('DTSTART')! <= stamp(booked.startsAt) && e.get('DTEND')! >= stamp(booked.endsAt),
      ),
    ).toBe(true);

    const both = eventsOf(await ics(bothToken));
    const free = both.filter((e) => e.get('TRANSP') === 'TRANSPARENT');
    expect(free.length).toBeGreaterThan(0);
    expect(both.filter((e) => e.get('TRANSP') === 'OPAQUE')).toEqual(busy);
    for (const block of free) {
      for (const taken of busy) {
        const apart =
          block.get('DTEND')! <= taken.get('DTSTART')! || block.get('DTSTART')! >= taken.get('DTEND')!;
        expect(apart).toBe(true);
      }
    }
    // Nothing changed: the same bytes again.
    expect(await ics(bothToken)).toBe(await ics(bothToken));

    // The same feed's free/busy: one VFREEBUSY with the same free and busy time, the same validators' rules.
    const ifb = await h.get(`/freebusy/${busyToken}.ifb`);
    expect(ifb.status).toBe(200);
    expect(ifb.headers['content-type']).toBe('text/calendar; charset=utf-8');
    const periods = (type: string) =>
      ifb.text
        .replace(/\r\n /g, '')
        .split('\r\n')
        .filter((line) => line.startsWith(`FREEBUSY;FBTYPE=${type}:`))
        .map((line) => line.slice(line.indexOf(':') + 1));
    expect(periods('BUSY')).toEqual(busy.map((e) => `${e.get('DTSTART')}/${e.get('DTEND')}`));
    expect(periods('FREE')).toEqual(free.map((e) => `${e.get('DTSTART')}/${e.get('DTEND')}`));
    const again = await h.get(`/freebusy/${busyToken}.ifb`, { 'if-none-match': String(ifb.headers.etag) });
    expect(again.status).toBe(304);
    expect((await h.get(`/freebusy/${'x'.repeat(43)}.ifb`)).status).toBe(404);
  });
});
