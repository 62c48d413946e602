// GET/HEAD /feeds/{token}.ics end to end: strict validity, byte-identical bodies, the conditional-GET matrix
// case by case, gzip only on request, uniform 404s, a booking in the simulator showing up after a sync, and
// the last good snapshot kept through needs_reauth and failed syncs.
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js-v2';
import { freeBlockUid, slotUid } from '../../src/feeds/render-feed.js';
import { buildWebApp } from '../../src/web/app.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import type { FakeClock } from '../support/sync-harness.js';
import { simUser } from '../support/sync-truth.js';
import { createWebHarness, type RawResponse, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
/** The connection's default feed: free time. */
let token: string;
/** A feed of the same connection in the slots view. */
let slotsToken: string;
let connectionId: string;
let email: string;
const logLines: string[] = [];

function eventsOf(ics: string): { uid: string; start: string; end: string; summary: string }[] {
  const calendar = new ICAL.Component(ICAL.parse(ics) as unknown[]);
  const iso = (value: unknown) => (value as InstanceType<typeof ICAL.Time>).toJSDate().toISOString();
  return calendar.getAllSubcomponents('vevent').map((event) => ({
    uid: String(event.getFirstPropertyValue('uid')),
    start: iso(event.getFirstPropertyValue('dtstart')),
    end: iso(event.getFirstPropertyValue('dtend')),
    summary: String(event.getFirstPropertyValue('summary')),
  }));
}

async function feed(
  headers: Record<string, string> = {},
  method = 'GET',
  feedToken = token,
): Promise<RawResponse> {
  const response = await h.request(method, `/feeds/${feedToken}.ics`, { headers });
  if (response.status === 200 && method === 'GET' && response.headers['content-encoding'] === undefined) {
    assertStrictIcs(response.text);
  }
  return response;
}

function counterValue(name: string, labels: Record<string, string>): Promise<number> {
  return h.metrics.registry
    .getSingleMetric(name)!
    .get()
    .then(
      (m) => m.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0,
    );
}

beforeAll(async () => {
  // Feed polls are logged at debug (at info they would drown the log).
  h = await createWebHarness('web_feeds', { logLines, logLevel: 'debug' });
  email = h.sync.sim.users[0]!.email;
  const connected = await h.connectViaWeb(email);
  token = connected.token!;
  connectionId = connected.connectionId;
  slotsToken = (await h.feeds.create({ connectionId, options: { view: 'slots' } })).token;
  await h.syncNow(connectionId);
});
afterAll(async () => {
  await h?.close();
});

describe('a served feed', () => {
  it('is a strict iCalendar file of free-time blocks, served with calendar headers and no redirect', async () => {
    const response = await feed();
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(response.headers.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    const connection = await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    expect(response.headers['last-modified']).toBe(
      new Date(Math.floor(connection.feedChangedAt!.getTime() / 1000) * 1000).toUTCString(),
    );
    // Half the nearest band's interval: a subscriber polling at that rate sees each near-date pull.
    expect(response.headers['cache-control']).toBe(
      `private, max-age=${h.sync.config.sync.intervalSeconds / 2}`,
    );
    expect(h.sync.config.sync.intervalSeconds).toBe(240);
    expect(response.headers['content-encoding']).toBeUndefined();
    const events = eventsOf(response.text);
    const windowEnd = new Date(Date.parse('2026-03-02T00:00:00Z') + 29 * 86_400_000);
    const open = await h.sync.db.prisma.slot.findMany({
      where: { connectionId, goneAt: null, startsAt: { lt: windowEnd } },
    });
    expect(events.length).toBeGreaterThan(0);
    expect(events.length).toBeLessThan(open.length);
    // Blocks start where a slot starts, are known by that start, and never overlap or touch one another.
    const starts = new Set(open.map((s) => s.startsAt.toISOString()));
    expect(events.every((e) => starts.has(e.start))).toBe(true);
    expect(events.every((e) => e.uid === freeBlockUid(connectionId, new Date(e.start)))).toBe(true);
    expect(events.every((e) => e.summary === 'Free')).toBe(true);
    for (let i = 1; i < events.length; i++) expect(events[i]!.start > events[i - 1]!.end).toBe(true);

    const slots = eventsOf((await feed({}, 'GET', slotsToken)).text);
    const uids = new Set(open.map((s) => slotUid(connectionId, s.upstreamEventId, s.startsAt)));
    expect(slots.length).toBeGreaterThan(events.length);
    expect(slots.every((e) => uids.has(e.uid))).toBe(true);
    expect(response.text).toContain('REFRESH-INTERVAL;VALUE=DURATION:PT4M');
    expect(response.text).toContain('X-PUBLISHED-TTL:PT4M');
  });

  it('is byte-identical across fetches and across a re-sync that changed nothing, and is rendered once', async () => {
    const first = await feed();
    const missesBefore = await counterValue('slotfeed_feed_render_cache_total', { result: 'miss' });
    const hitsBefore = await counterValue('slotfeed_feed_render_cache_total', { result: 'hit' });
    const second = await feed();
    expect(second.body.equals(first.body)).toBe(true);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(await counterValue('slotfeed_feed_render_cache_total', { result: 'hit' })).toBe(hitsBefore + 1);
    expect(await counterValue('slotfeed_feed_render_cache_total', { result: 'miss' })).toBe(missesBefore);

    (h.sync.clock as FakeClock).advance(60);
    await h.syncNow(connectionId);
    const afterResync = await feed();
    expect(afterResync.body.equals(first.body)).toBe(true);
    expect(afterResync.headers.etag).toBe(first.headers.etag);
    expect(afterResync.headers['last-modified']).toBe(first.headers['last-modified']);
  });

  it('answers robots.txt allowing /feeds/ only', async () => {
    const robots = await h.get('/robots.txt');
    expect(robots.status).toBe(200);
    expect(robots.text).toBe('User-agent: *\nAllow: /feeds/\nDisallow: /\n');
  });
});

describe('conditional GET', () => {
  let etag: string;
  let lastModified: string;
  const secondsFrom = (httpDate: string, delta: number) =>
    new Date(Date.parse(httpDate) + delta * 1000).toUTCString();

  beforeAll(async () => {
    // A change time with milliseconds, so "whole seconds" is really tested (the header drops them).
    await h.sync.db.prisma.connection.update({
      where: { id: connectionId },
      data: { feedVersion: { increment: 1 }, feedChangedAt: new Date('2026-03-02T09:01:30.750Z') },
    });
    const response = await feed();
    etag = response.headers.etag!;
    lastModified = response.headers['last-modified']!;
    expect(lastModified).toBe('Mon, 02 Mar 2026 09:01:30 GMT');
  });

  const expectNotModified = (response: RawResponse) => {
    expect(response.status).toBe(304);
    expect(response.body.length).toBe(0);
    expect(response.headers.etag).toBe(etag);
    expect(response.headers['last-modified']).toBe(lastModified);
  };

  it('If-None-Match with the current ETag → 304 repeating ETag and Last-Modified', async () => {
    expectNotModified(await feed({ 'if-none-match': etag }));
  });

  it('If-None-Match compares weakly: W/ and list members match', async () => {
    expectNotModified(await feed({ 'if-none-match': `W/${etag}` }));
    expectNotModified(await feed({ 'if-none-match': `"other", ${etag}` }));
  });

  it('If-None-Match without a match → 200 with the body', async () => {
    const response = await feed({ 'if-none-match': '"something-else"' });
    expect(response.status).toBe(200);
    expect(response.headers.etag).toBe(etag);
  });

  it('If-None-Match: * → 304 (the feed exists)', async () => {
    expectNotModified(await feed({ 'if-none-match': '*' }));
  });

  it('If-Modified-Since equal to Last-Modified → 304', async () => {
    expectNotModified(await feed({ 'if-modified-since': lastModified }));
  });

  it('If-Modified-Since later than Last-Modified → 304', async () => {
    expectNotModified(await feed({ 'if-modified-since': secondsFrom(lastModified, 3600) }));
  });

  it('If-Modified-Since one second earlier → 200', async () => {
    expect((await feed({ 'if-modified-since': secondsFrom(lastModified, -1) })).status).toBe(200);
  });

  it('a malformed If-Modified-Since is ignored → 200', async () => {
    expect((await feed({ 'if-modified-since': 'yesterday' })).status).toBe(200);
    expect((await feed({ 'if-modified-since': '2026-03-02T10:00:00Z' })).status).toBe(200);
    expect((await feed({ 'if-modified-since': 'Mon, 31 Feb 2026 09:01:30 GMT' })).status).toBe(200);
  });

  it('both sent: If-None-Match wins, in either direction', async () => {
    const later = secondsFrom(lastModified, 3600);
    const earlier = secondsFrom(lastModified, -3600);
    expect((await feed({ 'if-none-match': '"stale"', 'if-modified-since': later })).status).toBe(200);
    expectNotModified(await feed({ 'if-none-match': etag, 'if-modified-since': earlier }));
  });

  it('HEAD: the GET headers without a body, and 304 on a match', async () => {
    const get = await feed();
    const head = await feed({}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers.etag).toBe(etag);
    expect(head.headers['last-modified']).toBe(lastModified);
    expect(head.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(head.headers['content-length']).toBe(String(get.body.length));
    expectNotModified(await feed({ 'if-none-match': etag }, 'HEAD'));
  });
});

describe('compression', () => {
  it('sends gzip only when asked, under an ETag of its own that revalidates either way', async () => {
    const plain = await feed();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    const gzipped = await feed({ 'accept-encoding': 'gzip, deflate, br' });
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);
    expect(gzipped.headers.etag).toBe(plain.headers.etag!.replace(/"$/, '-gzip"'));
    expect((await feed({ 'accept-encoding': 'gzip' })).body.equals(gzipped.body)).toBe(true);
    expect((await feed({ 'accept-encoding': 'gzip', 'if-none-match': plain.headers.etag! })).status).toBe(
      304,
    );
    expect((await feed({ 'if-none-match': gzipped.headers.etag! })).status).toBe(304);
    expect(
      (await feed({ 'accept-encoding': 'gzip;q=0, identity' })).headers['content-encoding'],
    ).toBeUndefined();
    expect((await feed({ 'accept-encoding': 'br' })).headers['content-encoding']).toBeUndefined();
  });

  it('never compresses with FEED_GZIP=false', async () => {
    const app = await buildWebApp({ ...h.deps, settings: { ...h.deps.settings, feedGzip: false } });
    try {
      const response = await app.inject({
        url: `/feeds/${token}.ics`,
        headers: { 'accept-encoding': 'gzip' },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-encoding']).toBeUndefined();
      expect(response.headers.vary).toBeUndefined();
      assertStrictIcs(response.body);
    } finally {
      await app.close();
    }
  });
});

describe('bounded output', () => {
  it('caps the events at FEED_MAX_EVENTS, earliest first, and honours a feed day range and merge', async () => {
    const app = await buildWebApp({ ...h.deps, settings: { ...h.deps.settings, feedMaxEvents: 3 } });
    try {
      const response = await app.inject({ url: `/feeds/${token}.ics` });
      assertStrictIcs(response.body);
      const events = eventsOf(response.body);
      expect(events).toHaveLength(3);
      const all = eventsOf((await feed()).text);
      // Earliest first. (Which of two slots starting together survives the cap is the store's tie-break.)
      expect(events.map((e) => e.start)).toEqual(all.slice(0, 3).map((e) => e.start));
    } finally {
      await app.close();
    }
    const all = eventsOf((await feed()).text);
    const oneDay = await h.feeds.create({ connectionId, options: { days: 1 } });
    const oneDayEvents = eventsOf((await h.get(`/feeds/${oneDay.token}.ics`)).text);
    expect(oneDayEvents.length).toBeLessThan(all.length);
    expect(oneDayEvents.every((e) => e.start < '2026-03-03T00:00:00.000Z')).toBe(true);
    const slots = eventsOf((await feed({}, 'GET', slotsToken)).text);
    const merged = await h.feeds.create({ connectionId, options: { view: 'slots', merge: true } });
    const mergedResponse = await h.get(`/feeds/${merged.token}.ics`);
    assertStrictIcs(mergedResponse.text);
    expect(eventsOf(mergedResponse.text).length).toBeLessThan(slots.length);
  });

  it('stays within 75 octets a line with emoji and accented titles', async () => {
    const user = simUser(h.sync.sim, email);
    const eventType = user.event_types.find((e) => e.enabled)!;
    h.sync.sim.control.updateEventType(user.id, eventType.event_id, {
      title: 'Café crème ☕ Beratung für Zoë Ångström 🎉🗓️ – ausführliches Erstgespräch (60 Minuten)',
    });
    await h.syncNow(connectionId);
    // Free blocks list the title in their description; slots carry it as their summary.
    expect((await feed()).text).toContain('Café crème ☕');
    const response = await feed({}, 'GET', slotsToken);
    expect(response.text).toContain('Café crème ☕');
    const titles = eventsOf(response.text).map((e) => e.summary);
    expect(titles).toContain(
      'Café crème ☕ Beratung für Zoë Ångström 🎉🗓️ – ausführliches Erstgespräch (60 Minuten)',
    );
  });
});

describe('changes and failures', () => {
  it('drops a slot booked in the simulator after the next sync, under a new ETag', async () => {
    const before = await feed({}, 'GET', slotsToken);
    const now = h.sync.clock.now();
    const slot = await h.sync.db.prisma.slot.findFirstOrThrow({
      where: { connectionId, goneAt: null, startsAt: { gt: now } },
      orderBy: { startsAt: 'asc' },
    });
    const uid = slotUid(connectionId, slot.upstreamEventId, slot.startsAt);
    expect(eventsOf(before.text).map((e) => e.uid)).toContain(uid);

    h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
    (h.sync.clock as FakeClock).advance(120);
    await h.syncNow(connectionId);
    const after = await feed({}, 'GET', slotsToken);
    expect(after.status).toBe(200);
    expect(eventsOf(after.text).map((e) => e.uid)).not.toContain(uid);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(Date.parse(after.headers['last-modified']!)).toBeGreaterThan(
      Date.parse(before.headers['last-modified']!),
    );
    expect((await feed({ 'if-none-match': before.headers.etag! }, 'GET', slotsToken)).status).toBe(200);
  });

  it('keeps serving the last good snapshot after a failed sync and while re-authorisation is needed', async () => {
    const before = await feed();
    h.sync.sim.control.setFaults({ errorRate: 1 });
    try {
      await expect(h.syncNow(connectionId)).rejects.toThrow();
    } finally {
      h.sync.sim.control.setFaults({ errorRate: 0 });
    }
    const afterFailure = await feed();
    expect(afterFailure.status).toBe(200);
    expect(afterFailure.body.equals(before.body)).toBe(true);

    await h.sync.stores.connections.markNeedsReauth(connectionId, 'invalid_grant', h.sync.clock.now());
    const reauth = await feed();
    expect(reauth.status).toBe(200);
    expect(reauth.text.replace(/\r\n /g, '')).toContain('needs re-authorisation');
    expect(eventsOf(reauth.text).map((e) => e.uid)).toEqual(eventsOf(before.text).map((e) => e.uid));
    expect(reauth.headers.etag).not.toBe(before.headers.etag);
  });
});

describe('unknown, revoked and rotated tokens', () => {
  it('all answer 404 with the same body, whatever the token looks like', async () => {
    const extra = await h.feeds.create({ connectionId });
    const revoked = await h.feeds.create({ connectionId });
    await h.feeds.revoke(revoked.feed.id, h.sync.clock.now());
    const rotated = await h.feeds.create({ connectionId });
    const fresh = await h.feeds.rotate(rotated.feed.id);
    expect((await h.get(`/feeds/${fresh.token}.ics`)).status).toBe(200);
    expect((await h.get(`/feeds/${extra.token}.ics`)).status).toBe(200);

    const nearMiss = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    const candidates = [
      'A'.repeat(43),
      nearMiss,
      'short',
      'x'.repeat(300),
      '%F0%9F%8E%89',
      revoked.token,
      rotated.token,
    ];
    const responses = await Promise.all(candidates.map((t) => h.get(`/feeds/${t}.ics`)));
    for (const response of responses) {
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toBe(responses[0]!.headers['content-type']);
      expect(response.text).toBe(responses[0]!.text);
    }
    expect(JSON.parse(responses[0]!.text)).toEqual({
      error: 'not_found',
      message: 'No feed at this address. It may have been replaced or revoked.',
    });
    expect((await h.get(`/feeds/${revoked.token}/preview.json`)).status).toBe(404);
    expect(await counterValue('slotfeed_feed_requests_total', { status: '404' })).toBeGreaterThanOrEqual(
      candidates.length,
    );
    expect(await counterValue('slotfeed_feed_requests_total', { status: '304' })).toBeGreaterThan(0);
  });
});

describe('logs', () => {
  it('never carry a feed token or an authorization code, request lines included', () => {
    const text = logLines.join('');
    expect(text).toContain('"url":"/feeds/[redacted].ics"');
    expect(text).toContain('/oauth/callback?code=[redacted]');
    expect(text).not.toContain(token);
  });
});
