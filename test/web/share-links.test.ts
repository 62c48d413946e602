// Share links over real sockets (issue 37): the page, its text and its feed answer while the link lasts; with
// the clock moved past its expiry all three answer 410, and a revoked or unknown link 404, from the next
// request on. The page carries its validators (304), noindex and no-referrer; its embeddable variant's CSP names
// exactly the link's origins. What the page lists is the JSON API's answer for the feed's token.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import type { ShareLinkStore } from '../../src/store/share-links.js';
import { createTeamStore } from '../../src/store/teams.js';
import { NOT_ORIGINS } from '../support/not-origins.js';
import type { FakeClock } from '../support/sync-harness.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let links: ShareLinkStore;
let feedId: string;
let feedToken: string;
let connectionId: string;

const START = '2026-03-02T09:00:00Z';
const clock = () => h.sync.clock as FakeClock;

beforeAll(async () => {
  h = await createWebHarness('web_share_links', { simulator: { users: 1 } });
  links = h.deps.shareLinks;
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  connectionId = connected.connectionId;
  await h.syncNow(connectionId);
  feedToken = connected.token!;
  feedId = (await h.feeds.findByToken(feedToken))!.id;
});
afterAll(async () => {
  await h?.close();
});

const blocksIn = (html: string) =>
  [...html.matchAll(/class="share-block"\s+data-start="([^"]+)"\s+data-end="([^"]+)"/g)].map((m) => ({
    start: m[1],
    end: m[2],
  }));

describe('a share link that never expires', () => {
  let secret: string;
  beforeAll(async () => {
    clock().set(START);
    secret = (
      await links.create({ feedId, label: 'For the Acme interview', expiresAt: null, now: clock().now() })
    ).secret;
  });

  it('answers with the page: noindex, no referrer, never framed, and the feed token nowhere in it', async () => {
    const page = await h.get(`/share/${secret}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['x-robots-tag']).toContain('noindex');
    expect(page.text).toContain('<meta name="robots" content="noindex">');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.text).not.toContain(feedToken);
    expect(page.text).not.toContain('For the Acme interview');
    // Its times link to their booking pages, and the page says to pick one.
    expect(page.text).toMatch(/class="share-block-time" href="https:/);
    expect(page.text).toContain('Pick a time to book it.');
  });

  it('lists the blocks the JSON API gives the feed’s own token for the same days', async () => {
    const page = await h.get(`/share/${secret}?zone=Asia/Kolkata`);
    const from = DateTime.fromISO(START, { zone: 'Asia/Kolkata' }).toISODate()!;
    const to = DateTime.fromISO(START, { zone: 'Asia/Kolkata' }).plus({ days: 6 }).toISODate()!;
    const api = await h.get(
      `/api/v1/connections/${connectionId}/availability?from=${from}&to=${to}&zone=Asia/Kolkata`,
      { authorization: `Bearer ${feedToken}` },
    );
    const free = (JSON.parse(api.text) as { free: { start: string; end: string }[] }).free;
    expect(free.length).toBeGreaterThan(0);
    expect(blocksIn(page.text)).toEqual(
      free.map((b) => ({ start: new Date(b.start).toISOString(), end: new Date(b.end).toISOString() })),
    );
  });

  it('gives the week as text, one line a day, in the zone asked for', async () => {
    const text = await h.get(`/share/${secret}.txt?zone=Asia/Kolkata`);
    expect(text.status).toBe(200);
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    const lines = text.text.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toMatch(
        /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} [A-Z][a-z]{2}: \d\d:\d\d–(\w{3} )?\d\d:\d\d(, \d\d:\d\d–(\w{3} )?\d\d:\d\d)* \(Asia\/Kolkata\)$/,
      );
    }
  });

  it('answers a revalidation with the same validators 304, as feeds do', async () => {
    const first = await h.get(`/share/${secret}?zone=Europe/Berlin`);
    expect(first.headers.etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers['last-modified']).toBeDefined();
    expect(first.headers['cache-control']).toBe('private, no-cache');
    const again = await h.get(`/share/${secret}?zone=Europe/Berlin`, {
      'if-none-match': first.headers.etag as string,
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const since = await h.get(`/share/${secret}?zone=Europe/Berlin`, {
      'if-modified-since': first.headers['last-modified'] as string,
    });
    expect(since.status).toBe(304);
    const gzip = await h.get(`/share/${secret}?zone=Europe/Berlin`, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
  });

  it('serves the feed under its own address, the same bytes as the feed', async () => {
    const viaShare = await h.get(`/share/${secret}.ics`);
    const feed = await h.get(`/feeds/${feedToken}.ics`);
    expect(viaShare.status).toBe(200);
    expect(viaShare.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(viaShare.text).toBe(feed.text);
    expect(
      await h.get(`/share/${secret}.ics`, { 'if-none-match': viaShare.headers.etag as string }),
    ).toMatchObject({ status: 304 });
  });

  it('sends its feed to be revalidated every time, so a revoked link’s feed is not kept in a cache', async () => {
    const kept = await links.create({ feedId, label: 'calendar app', expiresAt: null, now: clock().now() });
    const first = await h.get(`/share/${kept.secret}.ics`);
    expect(first.status).toBe(200);
    // What the page is sent with: a cache may keep the bytes but must ask before it uses them again.
    expect(first.headers['cache-control']).toBe('private, no-cache');
    const revalidate = { 'if-none-match': String(first.headers.etag) };
    expect((await h.get(`/share/${kept.secret}.ics`, revalidate)).status).toBe(304);
    await links.revoke(kept.link.id, clock().now());
    expect((await h.get(`/share/${kept.secret}.ics`, revalidate)).status).toBe(404);
  });

  it('sends every one of its addresses to be revalidated, none to be kept without asking', async () => {
    for (const path of [
      `/share/${secret}`,
      `/share/${secret}.txt`,
      `/share/${secret}.ics`,
      `/share/${secret}/embed`,
    ]) {
      const answer = await h.get(path);
      expect({ path, status: answer.status, cacheControl: answer.headers['cache-control'] }).toEqual({
        path,
        status: 200,
        cacheControl: 'private, no-cache',
      });
    }
  });

  it('is gone at once when revoked: 404 like a link that never was, its text and feed too', async () => {
    const other = await links.create({ feedId, label: 'withdrawn', expiresAt: null, now: clock().now() });
    expect((await h.get(`/share/${other.secret}`)).status).toBe(200);
    await links.revoke(other.link.id, clock().now());
    const page = await h.get(`/share/${other.secret}`, { accept: 'text/html' });
    expect(page.status).toBe(404);
    expect(page.text).toContain('No such link');
    expect((await h.get(`/share/${other.secret}.txt`)).status).toBe(404);
    expect((await h.get(`/share/${other.secret}.ics`)).status).toBe(404);
    expect((await h.get('/share/never-issued-secret')).status).toBe(404);
  });

  it('notes when it was last opened', async () => {
    clock().advance(120);
    await h.get(`/share/${secret}`);
    const [link] = (await links.list({ feedIds: [feedId] })).filter(
      (l) => l.label === 'For the Acme interview',
    );
    expect(link?.lastOpenedAt?.toISOString()).toBe(clock().now().toISOString());
  });
});

describe('a share link that expires', () => {
  it('opens until its expiry and answers 410 after, the page, its text and its subscribe URL', async () => {
    clock().set(START);
    const expiresAt = new Date(Date.parse(START) + 7 * 86_400_000);
    const { secret } = await links.create({ feedId, label: 'a week', expiresAt, now: clock().now() });
    clock().set(new Date(expiresAt.getTime() - 1000).toISOString());
    expect((await h.get(`/share/${secret}`)).status).toBe(200);
    expect((await h.get(`/share/${secret}.txt`)).status).toBe(200);
    expect((await h.get(`/share/${secret}.ics`)).status).toBe(200);
    clock().set(expiresAt.toISOString());
    const page = await h.get(`/share/${secret}`, { accept: 'text/html' });
    expect(page.status).toBe(410);
    expect(page.text).toContain('This link has expired');
    expect((await h.get(`/share/${secret}.txt`)).status).toBe(410);
    expect((await h.get(`/share/${secret}.ics`)).status).toBe(410);
    expect((await h.get(`/share/${secret}/embed`)).status).toBe(410);
    clock().set(START);
  });
});

describe('the embeddable page', () => {
  it('may be framed only from the origins listed for its link; none listed, from nowhere', async () => {
    const listed = await links.create({
      feedId,
      label: 'blog',
      expiresAt: null,
      now: clock().now(),
      frameAncestors: ['https://blog.example.com', 'https://www.example.org:8443'],
    });
    const embed = await h.get(`/share/${listed.secret}/embed`);
    expect(embed.status).toBe(200);
    expect(embed.headers['content-security-policy']).toContain(
      'frame-ancestors https://blog.example.com https://www.example.org:8443',
    );
    const none = await links.create({ feedId, label: 'no embedding', expiresAt: null, now: clock().now() });
    expect((await h.get(`/share/${none.secret}/embed`)).headers['content-security-policy']).toContain(
      "frame-ancestors 'none'",
    );
  });

  it('leaves an origin stored before the rule out of its CSP: kept as written, never in the header', async () => {
    const { link, secret } = await links.create({
      feedId,
      label: 'older blog',
      expiresAt: null,
      now: clock().now(),
      frameAncestors: ['https://blog.example.com'],
    });
    await h.sync.db.prisma.shareLink.update({
      where: { id: link.id },
      data: { frameAncestors: ['https://*', 'https://blog.example.com', 'https://a.example;sandbox'] },
    });
    const csp = String((await h.get(`/share/${secret}/embed`)).headers['content-security-policy']);
    expect(csp).toContain('frame-ancestors https://blog.example.com');
    expect(csp).not.toContain('*');
    expect(csp).not.toContain('sandbox');
    await h.sync.db.prisma.shareLink.update({
      where: { id: link.id },
      data: { frameAncestors: ['https://*'] },
    });
    expect(String((await h.get(`/share/${secret}/embed`)).headers['content-security-policy'])).toContain(
      "frame-ancestors 'none'",
    );
  });

  it('refuses what is not an origin', async () => {
    await expect(
      links.create({
        feedId,
        label: 'bad',
        expiresAt: null,
        frameAncestors: ['https://a.example/path'],
        now: clock().now(),
      }),
    ).rejects.toThrow(/not an origin/);
    await expect(
      links.create({
        feedId,
        label: 'bad',
        expiresAt: null,
        frameAncestors: ['http://a.example'],
        now: clock().now(),
      }),
    ).rejects.toThrow(/https/);
  });

  it('refuses a host that is not letters, digits, hyphens and dots (or an IP address), naming it', async () => {
    for (const value of NOT_ORIGINS) {
      await expect(
        links.create({ feedId, label: 'bad', expiresAt: null, frameAncestors: [value], now: clock().now() }),
      ).rejects.toThrow(`"${value}" is not an origin`);
    }
    // What is one still is, an IP address or a port with it.
    const { link } = await links.create({
      feedId,
      label: 'addresses',
      expiresAt: null,
      now: clock().now(),
      frameAncestors: ['https://192.0.2.7:8443', 'https://[2001:db8::1]', 'http://localhost:3000'],
    });
    expect(link.frameAncestors).toEqual([
      'https://192.0.2.7:8443',
      'https://[2001:db8::1]',
      'http://localhost:3000',
    ]);
  });
});

describe('the stored link', () => {
  it('keeps its secret hashed and sealed, never plain', async () => {
    const { secret, link } = await links.create({
      feedId,
      label: 'stored',
      expiresAt: null,
      now: clock().now(),
    });
    const row = await h.sync.db.prisma.shareLink.findUniqueOrThrow({ where: { id: link.id } });
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(Buffer.from(row.secretHash).length).toBe(32);
    expect(await links.revealSecret(link.id)).toBe(secret);
  });
});

describe('the administrator', () => {
  const adminPost = (path: string, form: Record<string, string>) =>
    h.request('POST', path, {
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        'content-type': 'application/x-www-form-urlencoded',
        origin: h.url,
      },
      body: new URLSearchParams(form).toString(),
    });

  it('makes a share link on the connection’s page, sees its address there, and revokes it', async () => {
    const made = await adminPost(`/admin/feeds/${feedId}/share-links`, {
      label: 'For the board',
      expires: 'date',
      date: '2026-03-31',
    });
    expect(made.status).toBe(303);
    expect(made.headers.location).toBe(
      `/admin/connections/${connectionId}?notice=share-created#share-links-${feedId}`,
    );
    const page = await h.get(`/admin/connections/${connectionId}`, {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      accept: 'text/html',
    });
    expect(page.text).toContain('<strong>For the board</strong>');
    // The end of 31 March in the account's zone.
    const [link] = (await links.list({ feedIds: [feedId] })).filter((l) => l.label === 'For the board');
    expect(link?.expiresAt?.toISOString()).toBe(
      DateTime.fromISO('2026-04-01', { zone: 'Europe/Berlin' })
        .toUTC()
        .toISO({ suppressMilliseconds: false }),
    );
    const address = new RegExp(`value="http://[^"]+(/share/[A-Za-z0-9_-]{43})"`).exec(
      page.text.slice(page.text.indexOf('For the board')),
    )?.[1];
    expect((await h.get(address!)).status).toBe(200);
    const revoked = await adminPost(`/admin/share-links/${link!.id}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect((await h.get(address!)).status).toBe(404);
  });

  it('makes links at the app’s time, as everything else is written', async () => {
    clock().advance(90);
    const made = await adminPost(`/admin/feeds/${feedId}/share-links`, { label: 'timed', expires: 'never' });
    expect(made.status).toBe(303);
    const [link] = (await links.list({ feedIds: [feedId] })).filter((l) => l.label === 'timed');
    expect(link?.createdAt.toISOString()).toBe(clock().now().toISOString());
  });

  it('is refused an embed origin that is not one, with a 400 naming it, and no link is made', async () => {
    const before = (await links.list({ feedIds: [feedId] })).length;
    for (const value of NOT_ORIGINS.filter((v) => !v.includes(','))) {
      const made = await adminPost(`/admin/feeds/${feedId}/share-links`, {
        label: 'embedded',
        expires: 'never',
        origins: `https://ok.example.com\n${value}`,
      });
      expect(made.status).toBe(400);
      expect(made.text).toContain(`${value}`);
      expect(made.text).toContain('is not an origin');
    }
    expect(await links.list({ feedIds: [feedId] })).toHaveLength(before);
  });

  it('makes a team feed’s share link on the teams page, and sees its address there', async () => {
    const teams = createTeamStore(h.sync.db.prisma);
    const team = await teams.create('Reception');
    await teams.addMembers(team.id, [connectionId]);
    const { feed } = await h.feeds.createTeamFeed({ teamId: team.id, options: { mode: 'any' } });
    const made = await adminPost(`/admin/feeds/${feed.id}/share-links`, {
      label: 'For visitors',
      expires: 'never',
    });
    expect(made.headers.location).toBe(`/admin/teams?notice=share-created#share-links-${feed.id}`);
    const page = await h.get('/admin/teams?notice=share-created', {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      accept: 'text/html',
    });
    expect(page.text).toContain('Share link made');
    const section = page.text.slice(page.text.indexOf(`id="share-links-${feed.id}"`));
    expect(section).toContain('<strong>For visitors</strong>');
    const address = new RegExp(`value="http://[^"]+(/share/[A-Za-z0-9_-]{43})"`).exec(section)?.[1];
    const teamPage = (await h.get(address!)).text;
    expect(teamPage).toContain('<h1 class="share-owner">Reception</h1>');
    // Its times are when members are free, with nothing to book: the page does not ask to pick one.
    expect(teamPage).toContain('Free: ');
    expect(teamPage).not.toContain('book it');
  });
});

describe('the JSON API', () => {
  it('lets an API key scoped to the feed’s account make, list and revoke share links; a feed’s token may not', async () => {
    const key = (
      await h.deps.apiKeys.create({ label: 'share bot', connectionIds: [connectionId], teamIds: [] })
    ).secret;
    const asKey = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const made = await h.request('POST', `/api/v1/feeds/${feedId}/share-links`, {
      headers: asKey,
      body: JSON.stringify({
        label: 'From the API',
        expires: '7d',
        embedOrigins: ['https://blog.example.com'],
      }),
    });
    expect(made.status).toBe(201);
    const created = JSON.parse(made.text) as { shareLink: { id: string; expiresAt: string }; url: string };
    expect(created.shareLink.expiresAt).toBe(
      new Date(clock().now().getTime() + 7 * 86_400_000).toISOString(),
    );
    // Made at the app's time, as everything else it writes.
    expect(created.shareLink).toMatchObject({ createdAt: clock().now().toISOString() });
    const path = new URL(created.url).pathname;
    expect((await h.get(path)).status).toBe(200);
    const listing = await h.get(`/api/v1/feeds/${feedId}/share-links`, asKey);
    const listed = JSON.parse(listing.text) as {
      shareLinks: { id: string; label: string }[];
    };
    expect(listed.shareLinks.map((l) => l.label)).toContain('From the API');
    expect(JSON.stringify(listed)).not.toContain(path.split('/').pop()!);
    const asFeedToken = { authorization: `Bearer ${feedToken}`, 'content-type': 'application/json' };
    expect((await h.get(`/api/v1/feeds/${feedId}/share-links`, asFeedToken)).status).toBe(404);
    const revoked = await h.request('DELETE', `/api/v1/feeds/${feedId}/share-links/${created.shareLink.id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(revoked.status).toBe(200);
    expect(JSON.parse(revoked.text).shareLink.revokedAt).not.toBeNull();
    expect((await h.get(path)).status).toBe(404);
    // The list revalidated with the ETag from before the revocation is sent again, with it revoked.
    const relisted = await h.get(`/api/v1/feeds/${feedId}/share-links`, {
      ...asKey,
      'if-none-match': String(listing.headers.etag),
    });
    expect(relisted.status).toBe(200);
    expect(relisted.headers['cache-control']).toBe('private, no-cache');
    const again = JSON.parse(relisted.text) as { shareLinks: { id: string; revokedAt: string | null }[] };
    expect(again.shareLinks.find((l) => l.id === created.shareLink.id)?.revokedAt).not.toBeNull();
  });
});

describe('the JSON API refusing embed origins', () => {
  it('answers 400 naming an embed origin that is not one, and makes no link', async () => {
    const key = (
      await h.deps.apiKeys.create({ label: 'origins bot', connectionIds: [connectionId], teamIds: [] })
    ).secret;
    const before = (await links.list({ feedIds: [feedId] })).length;
    for (const value of NOT_ORIGINS) {
      const made = await h.request('POST', `/api/v1/feeds/${feedId}/share-links`, {
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'embedded', embedOrigins: ['https://ok.example.com', value] }),
      });
      expect(made.status).toBe(400);
      expect(JSON.parse(made.text)).toMatchObject({
        status: 400,
        detail: expect.stringContaining(`"${value}" is not an origin`),
      });
    }
    expect(await links.list({ feedIds: [feedId] })).toHaveLength(before);
  });
});

describe('an account whose stored zone this server does not know', () => {
  it('is told a date cannot be read in that zone (and to give days), where it was told the date is none', async () => {
    const key = (
      await h.deps.apiKeys.create({ label: 'zone bot', connectionIds: [connectionId], teamIds: [] })
    ).secret;
    const { timezone } = await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    await h.sync.db.prisma.connection.update({
      where: { id: connectionId },
      data: { timezone: 'Mars/Olympus_Mons' },
    });
    try {
      const made = await h.request('POST', `/api/v1/feeds/${feedId}/share-links`, {
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'dated', expires: '2026-03-31' }),
      });
      expect(made.status).toBe(400);
      const { detail } = JSON.parse(made.text) as { detail: string };
      expect(detail).toContain('"Mars/Olympus_Mons"');
      expect(detail).toContain('a number of days');
      expect(detail).not.toContain('is not a date');
      // Days need no zone.
      const days = await h.request('POST', `/api/v1/feeds/${feedId}/share-links`, {
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'for a week', expires: '7d' }),
      });
      expect(days.status).toBe(201);
    } finally {
      await h.sync.db.prisma.connection.update({ where: { id: connectionId }, data: { timezone } });
    }
  });
});

describe('a person’s share link whose event types name no booking page', () => {
  it('lists the times without links and does not ask the viewer to pick one', async () => {
    clock().set(START);
    const user = h.sync.sim.users[0]!;
    const eventIds = h.sync.sim.control.listUsers()[0]!.event_types.map((e) => e.event_id);
    const urls = new Map(
      h.sync.sim.control.listUsers()[0]!.event_types.map((e) => [e.event_id, e.url] as const),
    );
    // Not a link slotfeed would send anyone to (feed-events.ts's bookingUrl): the calendar names no booking page.
    for (const eventId of eventIds) h.sync.sim.control.updateEventType(user.id, eventId, { url: 'none' });
    try {
      await h.syncNow(connectionId);
      const { secret } = await links.create({
        feedId,
        label: 'no booking pages',
        expiresAt: null,
        now: clock().now(),
      });
      const page = await h.get(`/share/${secret}`);
      expect(page.status).toBe(200);
      expect(blocksIn(page.text).length).toBeGreaterThan(0);
      expect(page.text).not.toMatch(/class="share-block-time" href=/);
      expect(page.text).not.toContain('Pick a time to book it.');
    } finally {
      for (const eventId of eventIds)
        h.sync.sim.control.updateEventType(user.id, eventId, { url: urls.get(eventId)! });
      await h.syncNow(connectionId);
    }
  });
});

describe('a team feed’s share link', () => {
  it('shows the team’s name and the blocks the API gives the team feed’s token, in UTC without a choice', async () => {
    clock().set(START);
    const teams = createTeamStore(h.sync.db.prisma);
    const team = await teams.create('Front desk');
    await teams.addMembers(team.id, [connectionId]);
    const { feed, token } = await h.feeds.createTeamFeed({ teamId: team.id, options: { mode: 'any' } });
    const { secret } = await links.create({
      feedId: feed.id,
      label: 'team',
      expiresAt: null,
      now: clock().now(),
    });
    const page = await h.get(`/share/${secret}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1 class="share-owner">Front desk</h1>');
    // The zone picker offers IANA's current names, never the old ones ICU still lists (CLDR's mapping).
    for (const [old, current] of [
      ['Africa/Asmera', 'Africa/Asmara'],
      ['America/Catamarca', 'America/Argentina/Catamarca'],
      ['America/Cordoba', 'America/Argentina/Cordoba'],
      ['America/Jujuy', 'America/Argentina/Jujuy'],
      ['America/Mendoza', 'America/Argentina/Mendoza'],
      ['America/Louisville', 'America/Kentucky/Louisville'],
      ['America/Coral_Harbour', 'America/Atikokan'],
      ['Asia/Calcutta', 'Asia/Kolkata'],
    ]) {
      expect(page.text).not.toContain(`<option value="${old}"`);
      expect(page.text).toContain(`<option value="${current}"`);
    }
    expect(page.text).toContain('<strong data-share-zone-name>UTC</strong>');
    const from = START.slice(0, 10);
    const to = DateTime.fromISO(START, { zone: 'UTC' }).plus({ days: 6 }).toISODate()!;
    const api = await h.get(`/api/v1/teams/${team.id}/availability?from=${from}&to=${to}&zone=UTC`, {
      authorization: `Bearer ${token}`,
    });
    const blocks = (JSON.parse(api.text) as { blocks: { start: string; end: string }[] }).blocks;
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocksIn(page.text)).toEqual(
      blocks.map((b) => ({ start: new Date(b.start).toISOString(), end: new Date(b.end).toISOString() })),
    );
  });
});
