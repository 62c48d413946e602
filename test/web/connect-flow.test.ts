// The connect flow over real sockets against the simulator: happy path, reconnect, and every refusal, each
// checked for "nothing stored" where it applies.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { FakeClock } from '../support/sync-harness.js';
import { simUser } from '../support/sync-truth.js';
import { createWebHarness, FEED_TOKEN_IN_PAGE, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let emails: string[];

beforeAll(async () => {
  h = await createWebHarness('web_connect');
  emails = h.sync.sim.users.map((u) => u.email);
});
afterAll(async () => {
  await h?.close();
});

async function stored() {
  const prisma = h.sync.db.prisma;
  const [connections, feeds] = await Promise.all([prisma.connection.count(), prisma.feed.count()]);
  return { connections, feeds };
}

async function stateKeys(): Promise<string[]> {
  return h.sync.redis.connection.keys(`${h.sync.redis.prefix}:oauth-state:*`);
}

describe('GET /connect', () => {
  it('redirects to the authorization server with a single-use state kept in Redis and a PKCE challenge', async () => {
    const before = await stateKeys();
    const location = new URL(await h.startConnect());
    expect(`${location.origin}${location.pathname}`).toBe(`${h.sync.sim.authUrl}/login`);
    expect(location.searchParams.get('redirect_uri')).toBe(`${h.url}/oauth/callback`);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const state = location.searchParams.get('state');
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const after = await stateKeys();
    expect(after.length).toBe(before.length + 1);
    const key = `${h.sync.redis.prefix}:oauth-state:${state}`;
    expect(after).toContain(key);
    const ttl = await h.sync.redis.connection.ttl(key);
    expect(ttl).toBeGreaterThan(500);
    expect(ttl).toBeLessThanOrEqual(600);
  });
});

describe('GET /oauth/callback', () => {
  let nothingStoredBaseline: { connections: number; feeds: number };
  beforeEach(async () => {
    nothingStoredBaseline = await stored();
  });

  it('connects a user: connection, default feed, an immediate sync, then 303 to the owner page with every feed link', async () => {
    const email = emails[0]!;
    const { page, token, connectionId, callback, ownerCookie } = await h.connectViaWeb(email);
    // POST/redirect/GET: the callback answers 303, so a reload or the back button never replays it.
    expect(callback.status).toBe(303);
    expect(callback.headers.location).toBe('/me?notice=connected');
    expect(String(callback.headers['set-cookie'])).toMatch(/slotfeed_owner=[^;]+;.*HttpOnly/i);
    expect(String(callback.headers['set-cookie'])).toMatch(/SameSite=Lax/i);
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(token).not.toBeNull();
    const https = `${h.url}/feeds/${token}.ics`;
    const webcal = https.replace('http://', 'webcal://');
    expect(page.text).toContain(`value="${https}"`);
    expect(page.text).toContain(`href="${webcal}"`);
    expect(page.text).toContain(
      `href="https://calendar.google.com/calendar/render?cid=${encodeURIComponent(webcal)}"`,
    );
    expect(page.text).toContain(
      `https://outlook.live.com/calendar/0/addfromweb?url=${encodeURIComponent(https)}`,
    );
    expect(page.text).toContain(
      `https://outlook.office.com/calendar/0/addfromweb?url=${encodeURIComponent(https)}`,
    );
    expect(page.text).toMatch(/data-copy="feed-url-[0-9a-f-]{36}"/);
    // A QR code of the webcal URL, drawn as an inline SVG with an accessible name.
    expect(page.text).toMatch(
      /<div\s+class="qr"\s+role="img"\s+aria-label="QR code of the webcal address[^"]*"\s*>\s*<svg/,
    );
    // The harness's PUBLIC_BASE_URL is loopback: cloud calendars cannot fetch from it, and the page says so.
    expect(page.text).toContain('data-loopback-note');
    // The week preview reads the same feed URL.
    expect(page.text).toContain(`data-feed="/feeds/${token}.ics"`);

    const connection = await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    expect(connection.upstreamUserId).toBe(simUser(h.sync.sim, email).id);
    expect(connection.displayName).toBe(simUser(h.sync.sim, email).name);
    expect(connection.status).toBe('active');
    expect(await h.feeds.list({ connectionId })).toHaveLength(1);
    expect(h.enqueued).toContain(connectionId);
    const job = await h.sync.clients.syncQueue.getJobs(['waiting', 'prioritized', 'delayed']);
    expect(job.map((j) => j.data.connectionId)).toContain(connectionId);
    expect(await h.feeds.findByToken(token!)).toMatchObject({ connectionId });

    // Reloading the owner page shows the same URL again (it used to be lost for good).
    const reload = await h.get('/me', { accept: 'text/html', cookie: ownerCookie });
    expect(FEED_TOKEN_IN_PAGE.exec(reload.text)?.[1]).toBe(token);
    // Replaying the spent callback from the same browser lands on the page instead of "nothing was connected".
    const replay = await h.get(String(new URL(callback.headers.location!, h.url)), {});
    expect(replay.status).toBe(200);
  });

  it('updates the same account on reconnect instead of duplicating it, and keeps its feed and URL', async () => {
    const email = emails[1]!;
    const first = await h.connectViaWeb(email);
    const counts = await stored();
    const second = await h.connectViaWeb(email);
    expect(second.connectionId).toBe(first.connectionId);
    expect(second.callback.headers.location).toBe('/me?notice=reconnected');
    expect(second.token).toBe(first.token);
    expect(second.page.text).toContain('Your feed addresses are unchanged');
    expect(await stored()).toEqual(counts);
    expect((await h.get(`/feeds/${first.token}.ics`)).status).toBe(200);
  });

  it('shows a clear 400 page and stores nothing when consent is denied', async () => {
    const authorization = new URL(await h.startConnect());
    const form = new URLSearchParams(authorization.searchParams);
    form.set('decision', 'deny');
    const denied = await h.request('POST', `${h.sync.sim.authUrl}/login/approve`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(denied.status).toBe(302);
    const callback = new URL(denied.headers.location!);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const page = await h.get(callback.toString(), { accept: 'text/html' });
    expect(page.status).toBe(400);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('Access not granted');
    expect(page.text).toContain('declined');
    expect(await stored()).toEqual(nothingStoredBaseline);
    // The denied attempt spent its state.
    expect(
      await h.sync.redis.connection.exists(
        `${h.sync.redis.prefix}:oauth-state:${callback.searchParams.get('state')}`,
      ),
    ).toBe(0);
  });

  it('refuses a callback without state', async () => {
    const callback = new URL(await h.approve(await h.startConnect(emails[2]!)));
    callback.searchParams.delete('state');
    const page = await h.get(callback.toString(), { accept: 'text/html' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('carries no state');
    expect(await stored()).toEqual(nothingStoredBaseline);
  });

  it('refuses an unknown state', async () => {
    const callback = new URL(await h.approve(await h.startConnect(emails[2]!)));
    callback.searchParams.set('state', 'A'.repeat(43));
    const response = await h.get(callback.toString(), { accept: 'application/json' });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text)).toMatchObject({ error: 'bad_request' });
    expect(response.text).toContain('unknown, has expired');
    expect(await stored()).toEqual(nothingStoredBaseline);
  });

  it('refuses a replayed callback: the state is single-use', async () => {
    const email = emails[2]!;
    const callback = await h.approve(await h.startConnect(email));
    expect((await h.get(callback, { accept: 'text/html' })).status).toBe(303);
    const counts = await stored();
    const replay = await h.get(callback, { accept: 'text/html' });
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('already completed');
    expect(FEED_TOKEN_IN_PAGE.test(replay.text)).toBe(false);
    expect(await stored()).toEqual(counts);
  });

  it('refuses an expired authorization code (the simulator clock moved past its lifetime)', async () => {
    const callback = await h.approve(await h.startConnect(emails[2]!));
    (h.sync.clock as FakeClock).advance(5 * 60);
    const page = await h.get(callback, { accept: 'text/html' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('Sign-in expired');
    expect(page.text).toContain('expired or was already used');
    expect(await stored()).toEqual(nothingStoredBaseline);
  });

  it('refuses an authorization code that was already used, even under a fresh state', async () => {
    const email = emails[0]!;
    const before = await h.sync.db.prisma.connection.findFirstOrThrow({ where: { email } });
    const used = new URL(await h.approve(await h.startConnect(email)));
    expect((await h.get(used.toString())).status).toBe(303);
    const afterFirst = await h.sync.db.prisma.connection.findFirstOrThrow({ where: { email } });
    const fresh = new URL(await h.approve(await h.startConnect(email)));
    fresh.searchParams.set('code', used.searchParams.get('code')!);
    const page = await h.get(fresh.toString(), { accept: 'text/html' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('expired or was already used');
    const afterReplay = await h.sync.db.prisma.connection.findFirstOrThrow({ where: { email } });
    expect(afterReplay.accessTokenSealed).toBe(afterFirst.accessTokenSealed);
    expect(afterReplay.id).toBe(before.id);
  });
});
