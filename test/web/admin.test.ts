// The admin page and its actions: deny by default, bearer or signed-cookie sessions, CSRF checks for cookie
// sessions, every action's effect, and Bull Board behind the same guard.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Queue } from 'bullmq';
import { buildWebApp } from '../../src/web/app.js';
import type { FakeClock } from '../support/sync-harness.js';
import { ADMIN_TOKEN, createWebHarness, type RawResponse, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let connectionId: string;
let email: string;
let feedToken: string;
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  // Wrong tokens lock their address out after five (sign-in-lockout.ts): tests that send them on purpose
  // come through the loopback "proxy" from addresses of their own, so the rest stay signed in.
  h = await createWebHarness('web_admin', { webEnv: { TRUST_PROXY: '127.0.0.1' } });
  email = h.sync.sim.users[1]!.email;
  const connected = await h.connectViaWeb(email);
  connectionId = connected.connectionId;
  feedToken = connected.token!;
  await h.syncNow(connectionId);
});
afterAll(async () => {
  await h?.close();
});

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const formHeaders = (extra: Record<string, string> = {}) => ({
  'content-type': 'application/x-www-form-urlencoded',
  ...extra,
});

async function login(): Promise<string> {
  const response = await h.request('POST', '/admin/login', {
    headers: formHeaders({ origin: h.url }),
    body: form({ token: ADMIN_TOKEN, next: '/' }),
  });
  expect(response.status).toBe(303);
  const cookie = String(response.headers['set-cookie']?.[0] ?? '');
  return cookie.split(';')[0]!;
}

function expectNoData(response: RawResponse) {
  expect(response.text).not.toContain(email);
  expect(response.text).not.toContain(connectionId);
}

describe('the guard', () => {
  it('answers 401 without credentials: a login form for browsers, JSON for programs, never data', async () => {
    const page = await h.get('/admin', { accept: 'text/html' });
    expect(page.status).toBe(401);
    expect(page.text).toContain('name="token"');
    expectNoData(page);
    const json = await h.get('/admin', { accept: 'application/json' });
    expect(json.status).toBe(401);
    expect(json.headers['www-authenticate']).toBe('Bearer realm="slotfeed admin"');
    expect(JSON.parse(json.text)).toMatchObject({ error: 'unauthorized' });
    expectNoData(json);
  });

  it('answers 401 to a wrong bearer token or a forged cookie', async () => {
    const attempts: Record<string, string>[] = [
      { authorization: `Bearer ${ADMIN_TOKEN}x` },
      { authorization: 'Bearer short' },
      { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
      { cookie: 'slotfeed_admin=v1.99999999999999' },
      { cookie: 'slotfeed_admin=v1.99999999999999.forgedsignature' },
    ];
    for (const headers of attempts) {
      const response = await h.get('/admin', {
        accept: 'text/html',
        'x-forwarded-for': '198.51.100.1',
        ...headers,
      });
      expect(response.status).toBe(401);
      expectNoData(response);
    }
  });

  it('lets the bearer token in', async () => {
    const page = await h.get('/admin', { accept: 'text/html', ...bearer });
    expect(page.status).toBe(200);
    expect(page.text).toContain(email);
    expect(page.text).toContain(`data-connection-id="${connectionId}"`);
    expect(page.text).toMatch(/<span class="badge ok">active<\/span>/);
    expect(page.text).toContain('succeeded');
  });

  it('signs in with the form: a signed, HttpOnly, SameSite=Strict cookie that expires', async () => {
    const wrong = await h.request('POST', '/admin/login', {
      headers: formHeaders({ origin: h.url }),
      body: form({ token: 'not-the-admin-token-at-all' }),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('not the admin token');
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const crossSite = await h.request('POST', '/admin/login', {
      headers: formHeaders({ origin: 'http://evil.example' }),
      body: form({ token: ADMIN_TOKEN }),
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers['set-cookie']).toBeUndefined();

    const response = await h.request('POST', '/admin/login', {
      headers: formHeaders({ origin: h.url }),
      body: form({ token: ADMIN_TOKEN, next: '//evil.example/' }),
    });
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe('/admin');
    const setCookie = String(response.headers['set-cookie']?.[0]);
    expect(setCookie).toMatch(/^slotfeed_admin=[^;]+\.[^;]+;/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    // ADMIN_SESSION_SECONDS' default: 8 hours.
    expect(setCookie).toContain('Max-Age=28800');
    const cookie = setCookie.split(';')[0]!;
    expect((await h.get('/admin', { cookie, accept: 'text/html' })).status).toBe(200);

    (h.sync.clock as FakeClock).advance(8 * 3600 + 1);
    expect((await h.get('/admin', { cookie, accept: 'text/html' })).status).toBe(401);
  });

  it('refuses cookie-authenticated actions without our Origin or Referer (CSRF), changing nothing', async () => {
    const cookie = await login();
    const path = `/admin/connections/${connectionId}/disable`;
    const noOrigin = await h.request('POST', path, { headers: formHeaders({ cookie }), body: '' });
    expect(noOrigin.status).toBe(403);
    const foreign = await h.request('POST', path, {
      headers: formHeaders({ cookie, origin: 'http://127.0.0.1:1' }),
      body: '',
    });
    expect(foreign.status).toBe(403);
    const foreignReferer = await h.request('POST', path, {
      headers: formHeaders({ cookie, referer: 'http://evil.example/page' }),
      body: '',
    });
    expect(foreignReferer.status).toBe(403);
    const connection = await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    expect(connection.status).toBe('active');
    // Our own Referer (a browser that sends no Origin) is enough.
    const sameSite = await h.request('POST', `/admin/connections/${connectionId}/sync`, {
      headers: formHeaders({ cookie, referer: `${h.url}/` }),
      body: '',
    });
    expect(sameSite.status).toBe(303);
  });
});

describe('actions', () => {
  it('sync now enqueues a sync', async () => {
    const before = h.enqueued.length;
    const response = await h.request('POST', `/admin/connections/${connectionId}/sync`, {
      headers: formHeaders(bearer),
      body: '',
    });
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe('/admin?notice=sync-queued');
    expect(h.enqueued.slice(before)).toEqual([connectionId]);
    expect((await h.get('/admin?notice=sync-queued', { ...bearer, accept: 'text/html' })).text).toContain(
      'Sync queued',
    );
  });

  it('disable and enable change the status; the feed keeps serving', async () => {
    const disable = await h.request('POST', `/admin/connections/${connectionId}/disable`, {
      headers: formHeaders(bearer),
      body: '',
    });
    expect(disable.headers.location).toBe('/admin?notice=disabled');
    expect(
      (await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } })).status,
    ).toBe('disabled');
    expect(
      (await h.sync.stores.connections.findDue(new Date('2100-01-01'), 10)).map((row) => row.id),
    ).not.toContain(connectionId);
    expect((await h.get(`/feeds/${feedToken}.ics`)).status).toBe(200);
    const page = await h.get('/admin', { ...bearer, accept: 'text/html' });
    expect(page.text).toContain('data-action="enable"');

    const before = h.enqueued.length;
    const enable = await h.request('POST', `/admin/connections/${connectionId}/enable`, {
      headers: formHeaders(bearer),
      body: '',
    });
    expect(enable.headers.location).toBe('/admin?notice=enabled');
    expect(
      (await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } })).status,
    ).toBe('active');
    expect(h.enqueued.slice(before)).toEqual([connectionId]);
  });

  it('rotates a feed token: the new URL is shown once and works, the old one answers 404', async () => {
    const [feed] = await h.feeds.list({ connectionId });
    const response = await h.request('POST', `/admin/feeds/${feed!.id}/rotate`, {
      headers: formHeaders(bearer),
      body: '',
    });
    expect(response.status).toBe(200);
    expect(response.text).toContain('Feed URL replaced');
    const newToken = /\/feeds\/([A-Za-z0-9_-]{43})\.ics/.exec(response.text)?.[1];
    expect(newToken).toBeDefined();
    expect(newToken).not.toBe(feedToken);
    expect((await h.get(`/feeds/${feedToken}.ics`)).status).toBe(404);
    expect((await h.get(`/feeds/${newToken}.ics`)).status).toBe(200);
    feedToken = newToken!;
  });

  it('creates a feed for one event type with options, and revokes it', async () => {
    const eventType = await h.sync.db.prisma.eventType.findFirstOrThrow({
      where: { connectionId, validTo: null, enabled: true },
    });
    const created = await h.request('POST', `/admin/connections/${connectionId}/feeds`, {
      headers: formHeaders(bearer),
      body: form({
        upstreamEventId: eventType.upstreamEventId,
        view: 'slots',
        label: 'Intro only',
        days: '7',
        merge: 'true',
      }),
    });
    expect(created.status).toBe(200);
    expect(created.text).toContain('Feed created');
    const token = /\/feeds\/([A-Za-z0-9_-]{43})\.ics/.exec(created.text)![1]!;
    const record = (await h.feeds.findByToken(token))!;
    expect(record).toMatchObject({
      connectionId,
      upstreamEventId: eventType.upstreamEventId,
      label: 'Intro only',
      options: { view: 'slots', days: 7, merge: true },
    });
    const served = await h.get(`/feeds/${token}.ics`);
    expect(served.status).toBe(200);
    expect(served.text.replace(/\r\n /g, '')).toContain(eventType.title);

    const revoke = await h.request('POST', `/admin/feeds/${record.id}/revoke`, {
      headers: formHeaders(bearer),
      body: '',
    });
    expect(revoke.headers.location).toBe('/admin?notice=revoked');
    expect((await h.get(`/feeds/${token}.ics`)).status).toBe(404);
  });

  it('says what was wrong with a bad form or an unknown id', async () => {
    const badDays = await h.request('POST', `/admin/connections/${connectionId}/feeds`, {
      headers: formHeaders({ ...bearer, accept: 'application/json' }),
      body: form({ days: '999' }),
    });
    expect(badDays.status).toBe(400);
    expect(JSON.parse(badDays.text).message).toMatch(/Invalid feed options/);
    const badEvent = await h.request('POST', `/admin/connections/${connectionId}/feeds`, {
      headers: formHeaders({ ...bearer, accept: 'application/json' }),
      body: form({ upstreamEventId: 'no-such-event' }),
    });
    expect(badEvent.status).toBe(400);
    const unknown = await h.request('POST', '/admin/connections/not-a-uuid/sync', {
      headers: formHeaders({ ...bearer, accept: 'application/json' }),
      body: '',
    });
    expect(unknown.status).toBe(404);
    const unknownFeed = await h.request('POST', '/admin/feeds/00000000-0000-4000-8000-000000000000/rotate', {
      headers: formHeaders({ ...bearer, accept: 'text/html' }),
      body: '',
    });
    expect(unknownFeed.status).toBe(404);
    expect(unknownFeed.text).toContain('No such feed');
  });

  it('titles two unnamed feeds of every event type on the home page by what each shows', async () => {
    const created = await h.request('POST', `/admin/connections/${connectionId}/feeds`, {
      headers: formHeaders(bearer),
      body: form({ view: 'busy', days: '14' }),
    });
    expect(created.status).toBe(200);
    const token = /\/feeds\/([A-Za-z0-9_-]{43})\.ics/.exec(created.text)![1]!;
    const added = (await h.feeds.findByToken(token))!;
    const feeds = await h.feeds.list({ connectionId });
    const first = feeds.find((feed) => feed.id !== added.id && feed.revokedAt === null)!;
    expect(first).toMatchObject({ label: null, upstreamEventId: null });

    const home = await h.request('GET', '/admin', { headers: bearer });
    const titleOf = (feedId: string) =>
      new RegExp(`data-feed-id="${feedId}">\\s*<strong>([^<]*)</strong>`).exec(home.text)?.[1];
    expect(titleOf(added.id)).toBe('All event types: busy time, 14 days');
    expect(titleOf(first.id)).toMatch(/^All event types: /);
    expect(titleOf(first.id)).not.toBe(titleOf(added.id));

    await h.request('POST', `/admin/feeds/${added.id}/revoke`, { headers: formHeaders(bearer), body: '' });
  });
});

describe('Bull Board', () => {
  it('is behind the same guard', async () => {
    expect((await h.get('/admin/queues', { accept: 'text/html' })).status).toBe(401);
    expect((await h.get('/admin/queues/api/queues', { accept: 'application/json' })).status).toBe(401);
    expect(
      (
        await h.get('/admin/queues/api/queues', {
          authorization: 'Bearer wrong-token-0123456789',
          'x-forwarded-for': '198.51.100.2',
        })
      ).status,
    ).toBe(401);
    const page = await h.get('/admin/queues', { ...bearer, accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('slotfeed queues');
    const api = await h.get('/admin/queues/api/queues', bearer);
    expect(api.status).toBe(200);
    const names = (JSON.parse(api.text) as { queues: { name: string }[] }).queues.map((q) => q.name).sort();
    // Every queue slotfeed makes, read from its clients, so a later one cannot be left off the board.
    const made = Object.values(h.sync.clients)
      .filter((client): client is Queue => client instanceof Queue)
      .map((queue) => queue.name)
      .sort();
    expect(made).toEqual(['caldav', 'sync', 'tick', 'webhooks']);
    expect(names).toEqual(made);
  });
});

describe('teams', () => {
  const postForm = (path: string, fields: Record<string, string> = {}) =>
    h.request('POST', path, { headers: formHeaders(bearer), body: form(fields) });
  const teamsPage = () => h.get('/admin/teams', { ...bearer, accept: 'text/html' });

  it('creates a team, adds a member by e-mail, makes its feed (URL shown once), and deletes it', async () => {
    const created = await postForm('/admin/teams', { name: '  Night   shift ' });
    expect(created.status).toBe(303);
    const team = await h.sync.db.prisma.team.findUniqueOrThrow({ where: { name: 'Night shift' } });
    expect(created.headers.location).toBe(`/admin/teams?notice=team-created#team-${team.id}`);

    const added = await postForm(`/admin/teams/${team.id}/members`, { connection: email.toUpperCase() });
    expect(added.headers.location).toBe(`/admin/teams?notice=member-added#team-${team.id}`);
    const page = await teamsPage();
    expect(page.text).toContain('Night shift');
    expect(page.text).toContain(`data-connection-id="${connectionId}"`);

    const made = await postForm(`/admin/teams/${team.id}/feeds`, { mode: 'all', minimum: '60', days: '7' });
    expect(made.status).toBe(200);
    const token = /\/feeds\/([A-Za-z0-9_-]{43})\.ics/.exec(made.text)![1]!;
    expect(made.text).toContain('Hand this URL to the team');
    const feed = await h.get(`/feeds/${token}.ics`);
    expect(feed.status).toBe(200);
    expect(feed.text).toContain('X-WR-CALNAME:Night shift – everyone free');
    expect((await teamsPage()).text).toContain('everyone free, at least 60 min; 7 days');
    // The URL is not on the page again.
    expect((await teamsPage()).text).not.toContain(token);

    const removed = await postForm(`/admin/teams/${team.id}/members/${connectionId}/remove`);
    expect(removed.headers.location).toBe(`/admin/teams?notice=member-removed#team-${team.id}`);
    expect((await postForm(`/admin/teams/${team.id}/members/${connectionId}/remove`)).headers.location).toBe(
      `/admin/teams?notice=not-a-member#team-${team.id}`,
    );
    const deleted = await postForm(`/admin/teams/${team.id}/delete`);
    expect(deleted.headers.location).toBe('/admin/teams?notice=team-deleted');
    expect((await h.get(`/feeds/${token}.ics`)).status).toBe(404);
  });

  it('revoking a team feed returns to the teams page, and the URL answers 404', async () => {
    await postForm('/admin/teams', { name: 'Revokers' });
    const team = await h.sync.db.prisma.team.findUniqueOrThrow({ where: { name: 'Revokers' } });
    const { feed, token } = await h.feeds.createTeamFeed({ teamId: team.id });
    const revoked = await postForm(`/admin/feeds/${feed.id}/revoke`);
    expect(revoked.headers.location).toBe('/admin/teams?notice=revoked');
    expect((await h.get(`/feeds/${token}.ics`)).status).toBe(404);
  });

  it('says what is wrong with a form, and changes nothing', async () => {
    await postForm('/admin/teams', { name: 'Twice' });
    const team = await h.sync.db.prisma.team.findUniqueOrThrow({ where: { name: 'Twice' } });
    const cases: [string, Record<string, string>, number, string][] = [
      ['/admin/teams', { name: 'Twice' }, 400, 'A team named &quot;Twice&quot; exists already.'],
      ['/admin/teams', { name: '   ' }, 400, 'A team needs a name.'],
      [
        `/admin/teams/${team.id}/members`,
        { connection: 'nobody@example.test' },
        400,
        'no connection has the id or e-mail address',
      ],
      [`/admin/teams/${team.id}/members`, {}, 400, 'Name the connection to add'],
      [`/admin/teams/${team.id}/feeds`, { mode: 'most' }, 400, 'Invalid feed options'],
      [`/admin/teams/${team.id}/feeds`, { mode: 'all', minimum: '0' }, 400, 'Invalid feed options'],
      ['/admin/teams/00000000-0000-4000-8000-000000000000/feeds', { mode: 'all' }, 404, 'No such team.'],
      ['/admin/teams/not-a-team/delete', {}, 404, 'No such team.'],
    ];
    for (const [path, fields, status, message] of cases) {
      const response = await h.request('POST', path, {
        headers: formHeaders({ ...bearer, accept: 'text/html' }),
        body: form(fields),
      });
      expect([path, response.status]).toEqual([path, status]);
      expect(response.text).toContain(message);
    }
    expect(await h.sync.db.prisma.team.count({ where: { name: 'Twice' } })).toBe(1);
    expect(
      await h.sync.db.prisma.team.findUniqueOrThrow({
        where: { id: team.id },
        include: { members: true, feeds: true },
      }),
    ).toMatchObject({ members: [], feeds: [] });
  });
});

describe('with ADMIN_TOKEN unset', () => {
  it('denies every admin route, whatever is sent', async () => {
    const app = await buildWebApp({ ...h.deps, settings: { ...h.deps.settings, adminToken: '' } });
    try {
      for (const url of ['/admin', '/admin/queues', '/admin/queues/api/queues', '/admin/login']) {
        for (const headers of [
          {},
          { authorization: 'Bearer ' },
          { authorization: `Bearer ${ADMIN_TOKEN}` },
        ]) {
          const response = await app.inject({ url, headers });
          expect(response.statusCode).toBe(403);
          expect(response.body).not.toContain(email);
        }
      }
      const action = await app.inject({ method: 'POST', url: `/admin/connections/${connectionId}/disable` });
      expect(action.statusCode).toBe(403);
    } finally {
      await app.close();
    }
  });
});
