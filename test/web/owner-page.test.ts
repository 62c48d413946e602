// The owner's own page over real sockets against the simulator: signing in with Calendbook, the page that
// shows every feed's URL again, and each action an owner has, down to deleting everything.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTeamStore } from '../../src/store/teams.js';
import {
  ADMIN_TOKEN,
  createWebHarness,
  FEED_TOKEN_IN_PAGE,
  type WebHarness,
} from '../support/web-harness.js';

let h: WebHarness;
let emails: string[];

beforeAll(async () => {
  h = await createWebHarness('web_owner_page', { simulator: { users: 12 } });
  emails = h.sync.sim.users.map((u) => u.email);
});
afterAll(async () => {
  await h?.close();
});

const FEED_IDS_IN_PAGE = /data-feed-id="([0-9a-f-]{36})"/g;

/** A POST from our own origin, as the page's forms send it. */
function post(path: string, cookie: string, form: Record<string, string> = {}) {
  return h.request('POST', path, {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: h.url,
      cookie,
      accept: 'text/html',
    },
    body: new URLSearchParams(form).toString(),
  });
}

const ownerPage = (cookie: string) => h.get('/me', { accept: 'text/html', cookie });
const feedIdsIn = (text: string) => [...text.matchAll(FEED_IDS_IN_PAGE)].map((m) => m[1]!);
const tokensIn = (text: string) => [
  ...new Set([...text.matchAll(new RegExp(FEED_TOKEN_IN_PAGE, 'g'))].map((m) => m[1]!)),
];

/** The sign-in flow for an account: its callback's answer. */
async function signIn(email: string) {
  const start = await h.get(`/signin?login_hint=${encodeURIComponent(email)}`);
  expect(start.status).toBe(302);
  return h.get(await h.approve(String(start.headers.location)), { accept: 'text/html' });
}

describe('signing in with Calendbook', () => {
  it('starts a session for a connected account without storing anything new', async () => {
    const connected = await h.connectViaWeb(emails[0]!);
    const before = await h.sync.db.prisma.connection.findUniqueOrThrow({
      where: { id: connected.connectionId },
    });
    const callback = await signIn(emails[0]!);
    expect(callback.status).toBe(303);
    expect(callback.headers.location).toBe('/me?notice=signed-in');
    const cookie = String(callback.headers['set-cookie']?.[0]).split(';')[0]!;
    const page = await ownerPage(cookie);
    expect(FEED_TOKEN_IN_PAGE.exec(page.text)?.[1]).toBe(connected.token);
    const after = await h.sync.db.prisma.connection.findUniqueOrThrow({
      where: { id: connected.connectionId },
    });
    // The grant made to sign in is not stored: the connection keeps its own tokens.
    expect(after.refreshTokenSealed).toBe(before.refreshTokenSealed);
    expect(await h.sync.db.prisma.connection.count()).toBe(1);
  });

  it('for an account never connected, says so and creates nothing', async () => {
    const counts = await h.sync.db.prisma.connection.count();
    const callback = await signIn(emails[5]!);
    expect(callback.status).toBe(200);
    expect(callback.text).toContain('not connected to slotfeed');
    expect(callback.headers['set-cookie']).toBeUndefined();
    expect(await h.sync.db.prisma.connection.count()).toBe(counts);
  });

  it('without a session, /me offers sign-in and shows no feed', async () => {
    const page = await h.get('/me', { accept: 'text/html' });
    expect(page.text).toContain('Sign in with Calendbook');
    expect(page.text).not.toMatch(FEED_TOKEN_IN_PAGE);
  });

  it('signing out ends the session for every copy of the cookie', async () => {
    const { ownerCookie } = await h.connectViaWeb(emails[1]!);
    const out = await post('/signout', ownerCookie);
    expect(out.status).toBe(303);
    expect((await ownerPage(ownerCookie)).text).toContain('Sign in with Calendbook');
  });
});

describe('the owner’s journey', () => {
  it('feed of one event type, replace its address, revoke it, pause, then delete everything', async () => {
    const { ownerCookie: cookie, connectionId, token: defaultToken } = await h.connectViaWeb(emails[2]!);
    await h.syncNow(connectionId);
    const eventTypes = await h.sync.db.prisma.eventType.findMany({ where: { connectionId, validTo: null } });
    const event = eventTypes[0]!;

    const created = await post('/me/feeds', cookie, {
      upstreamEventId: event.upstreamEventId,
      view: 'slots',
      days: '7',
      label: 'Intro calls',
    });
    expect(created.status).toBe(303);
    expect(created.headers.location).toMatch(/^\/me\?notice=feed-created/);
    let page = await ownerPage(cookie);
    expect(page.text).toContain('Intro calls');
    const [, feedId] = feedIdsIn(page.text);
    const [, token] = tokensIn(page.text);
    expect(await h.feeds.get(feedId!)).toMatchObject({
      upstreamEventId: event.upstreamEventId,
      options: { view: 'slots', days: 7 },
    });
    expect((await h.get(`/feeds/${token}.ics`)).status).toBe(200);

    // Replace: the old address stops at once, the page shows the new one.
    expect((await post(`/me/feeds/${feedId}/rotate`, cookie)).headers.location).toMatch(/notice=rotated/);
    expect((await h.get(`/feeds/${token}.ics`)).status).toBe(404);
    page = await ownerPage(cookie);
    const newToken = tokensIn(page.text)[1]!;
    expect(newToken).not.toBe(token);
    expect((await h.get(`/feeds/${newToken}.ics`)).status).toBe(200);

    // Revoke: gone from the page, 404.
    await post(`/me/feeds/${feedId}/revoke`, cookie);
    expect((await h.get(`/feeds/${newToken}.ics`)).status).toBe(404);
    expect(feedIdsIn((await ownerPage(cookie)).text)).not.toContain(feedId);

    // Pause and resume.
    await post('/me/pause', cookie);
    expect(
      (await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } })).status,
    ).toBe('disabled');
    expect((await ownerPage(cookie)).text).toContain('Resume syncing');
    await post('/me/resume', cookie);
    expect(
      (await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } })).status,
    ).toBe('active');

    // Delete everything: the connection, its snapshots and feeds; the URLs and the session stop working.
    expect(await h.sync.db.prisma.slot.count({ where: { connectionId } })).toBeGreaterThan(0);
    const deleted = await post('/me/delete', cookie);
    expect(deleted.status).toBe(303);
    expect(deleted.headers.location).toBe('/deleted');
    expect((await h.get('/deleted', { accept: 'text/html' })).text).toContain('Calendbook account settings');
    const prisma = h.sync.db.prisma;
    expect(await prisma.connection.count({ where: { id: connectionId } })).toBe(0);
    expect(await prisma.slot.count({ where: { connectionId } })).toBe(0);
    expect(await prisma.eventType.count({ where: { connectionId } })).toBe(0);
    expect(await prisma.feed.count({ where: { connectionId } })).toBe(0);
    expect((await h.get(`/feeds/${defaultToken}.ics`)).status).toBe(404);
    expect((await ownerPage(cookie)).text).toContain('Sign in with Calendbook');
    expect(await h.sync.redis.connection.keys(`${h.sync.redis.prefix}:owner-session*`)).toEqual(
      expect.not.arrayContaining([expect.stringContaining(connectionId)]),
    );
  });

  it('an owner cannot act on another owner’s feed, and a form from another site is refused', async () => {
    const ada = await h.connectViaWeb(emails[3]!);
    const eve = await h.connectViaWeb(emails[4]!);
    const adaFeed = feedIdsIn(ada.page.text)[0]!;
    for (const action of ['rotate', 'revoke']) {
      const attempt = await post(`/me/feeds/${adaFeed}/${action}`, eve.ownerCookie);
      expect(attempt.status).toBe(404);
    }
    expect((await h.get(`/feeds/${ada.token}.ics`)).status).toBe(200);
    const crossSite = await h.request('POST', `/me/feeds/${adaFeed}/rotate`, {
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://evil.example',
        cookie: ada.ownerCookie,
      },
      body: '',
    });
    expect(crossSite.status).toBe(403);
    expect((await h.get(`/feeds/${ada.token}.ics`)).status).toBe(200);
  });

  it('lists the owner’s teams by member name, with their feeds to subscribe to, and lets them leave one', async () => {
    const owner = await h.connectViaWeb(emails[6]!);
    const other = await h.connectViaWeb(emails[7]!);
    const teams = createTeamStore(h.sync.db.prisma);
    const team = await teams.create('Front desk');
    await teams.addMembers(team.id, [owner.connectionId, other.connectionId]);
    const teamFeed = await h.feeds.createTeamFeed({ teamId: team.id, options: { mode: 'any' } });
    const page = await ownerPage(owner.ownerCookie);
    expect(page.text).toContain('Front desk');
    expect(page.text).not.toContain(emails[7]!);
    // The team feed's address is on the page, and it is the team's feed.
    expect(tokensIn(page.text)).toContain(teamFeed.token);
    expect((await h.get(`/feeds/${teamFeed.token}.ics`)).text).toContain(
      'X-WR-CALNAME:Front desk – who is free',
    );
    // Its preview: the page again, previewing that feed.
    expect(page.text).toContain(`href="/me?preview=${teamFeed.feed.id}#week-preview"`);
    const previewing = await h.get(`/me?preview=${teamFeed.feed.id}`, {
      accept: 'text/html',
      cookie: owner.ownerCookie,
    });
    expect(/data-feed="([^"]+)"/.exec(previewing.text)?.[1]).toBe(`/feeds/${teamFeed.token}.ics`);
    // Another team's feed id is not previewed: the owner's own first feed is.
    const elsewhere = await teams.create('Elsewhere');
    await teams.addMembers(elsewhere.id, [other.connectionId]);
    const foreign = await h.feeds.createTeamFeed({ teamId: elsewhere.id });
    const notPreviewing = await h.get(`/me?preview=${foreign.feed.id}`, {
      accept: 'text/html',
      cookie: owner.ownerCookie,
    });
    expect(/data-feed="([^"]+)"/.exec(notPreviewing.text)?.[1]).toBe(`/feeds/${owner.token}.ics`);
    expect(notPreviewing.text).not.toContain(foreign.token);
    expect((await post(`/me/teams/${team.id}/leave`, owner.ownerCookie)).headers.location).toBe(
      '/me?notice=left',
    );
    expect((await teams.find(team.id)).members.map((m) => m.connectionId)).toEqual([other.connectionId]);
  });
});

describe('choosing what a feed shows', () => {
  it('changes an existing feed’s view under the same address', async () => {
    const owner = await h.connectViaWeb(emails[8]!);
    await h.syncNow(owner.connectionId);
    const feedId = (await h.feeds.list({ connectionId: owner.connectionId }))[0]!.id;
    expect((await h.get(`/feeds/${owner.token}.ics`)).text).toContain('X-WR-CALDESC:Free time of');
    const changed = await post(`/me/feeds/${feedId}/view`, owner.ownerCookie, { view: 'busy' });
    expect(changed.status).toBe(303);
    expect(changed.headers.location).toBe(`/me?notice=view-changed#feed-title-${feedId}`);
    const busy = await h.get(`/feeds/${owner.token}.ics`);
    expect(busy.status).toBe(200);
    expect(busy.text).toContain('X-WR-CALDESC:Busy time');
    expect(busy.text).not.toContain('TRANSP:TRANSPARENT');
    const page = await ownerPage(owner.ownerCookie);
    expect(page.text).toMatch(new RegExp(`<option value="busy"\\s+selected`));

    expect((await post(`/me/feeds/${feedId}/view`, owner.ownerCookie, { view: 'everything' })).status).toBe(
      400,
    );
    const stranger = await h.connectViaWeb(emails[9]!);
    expect((await post(`/me/feeds/${feedId}/view`, stranger.ownerCookie, { view: 'slots' })).status).toBe(
      404,
    );
    expect((await h.get(`/feeds/${owner.token}.ics`)).text).toContain('X-WR-CALDESC:Busy time');
  });
});

describe('naming a feed', () => {
  it('puts the owner’s name first on /me and on the admin page’s CalDAV section, and takes it back when cleared', async () => {
    const owner = await h.connectViaWeb(emails[10]!);
    const feedId = (await h.feeds.list({ connectionId: owner.connectionId }))[0]!.id;
    const titleOn = (text: string, id: string) =>
      new RegExp(`id="${id}"[^>]*>\\s*([^<]+?)\\s*<`).exec(text)?.[1];
    expect(titleOn((await ownerPage(owner.ownerCookie)).text, `feed-title-${feedId}`)).toBe(
      'All event types: free time',
    );
    const adminPage = () =>
      h.get(`/admin/connections/${owner.connectionId}`, {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        accept: 'text/html',
      });
    // The admin's sections title the feed as /me does, so two unnamed feeds are told apart there too.
    for (const section of ['caldav-title', 'share-title']) {
      expect(titleOn((await adminPage()).text, `${section}-${feedId}`)).toBe('All event types: free time');
    }

    const renamed = await post(`/me/feeds/${feedId}/name`, owner.ownerCookie, { label: '  Office hours  ' });
    expect(renamed.status).toBe(303);
    expect(renamed.headers.location).toBe(`/me?notice=renamed#feed-title-${feedId}`);
    expect(titleOn((await ownerPage(owner.ownerCookie)).text, `feed-title-${feedId}`)).toBe('Office hours');
    const admin = await adminPage();
    expect(titleOn(admin.text, `caldav-title-${feedId}`)).toBe('Office hours');
    expect(titleOn(admin.text, `share-title-${feedId}`)).toBe('Office hours');

    const stranger = await h.connectViaWeb(emails[11]!);
    expect((await post(`/me/feeds/${feedId}/name`, stranger.ownerCookie, { label: 'Mine' })).status).toBe(
      404,
    );
    expect((await post(`/me/feeds/${feedId}/name`, owner.ownerCookie, { label: '' })).status).toBe(303);
    expect(titleOn((await ownerPage(owner.ownerCookie)).text, `feed-title-${feedId}`)).toBe(
      'All event types: free time',
    );
  });
});
