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

  it('connects a user: connection, default feed, an immediate sync, and a page with every feed link', async () => {
    const email = emails[0]!;
    const { page, token, connectionId } = await h.connectViaWeb(email);
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(token).not.toBeNull();
    const https = `${h.url}/feeds/${token}.ics`;
    const webcal = https.replace('http://', 'webcal://');
    expect(page.text).toContain(`value="${https}"`);
    expect(page.text).toContain(`href="${webcal}"`);
    expect(page.text).toContain(
      `href="https://calendar.google.com/calendar/render?cid=${encodeURIComponent(webcal).replaceAll('%', '%')}"`,
    );
    expect(page.text).toContain(
      `https://outlook.live.com/calendar/0/addfromweb?url=${encodeURIComponent(https)}`,
    );
    expect(page.text).toContain('Add to Google Calendar');
    expect(page.text).toContain('Add to Outlook.com');
    expect(page.text).toMatch(/data-copy="feed-https"/);
    expect(page.text).toContain(`/feeds/${token}/preview.json`);

    const connection = await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    expect(connection.upstreamUserId).toBe(simUser(h.sync.sim, email).id);
    expect(connection.displayName).toBe(simUser(h.sync.sim, email).name);
    expect(connection.status).toBe('active');
    expect(await h.feeds.list({ connectionId })).toHaveLength(1);
    expect(h.enqueued).toContain(connectionId);
    const job = await h.sync.services.syncQueue.getJobs(['waiting', 'prioritized', 'delayed']);
    expect(job.map((j) => j.data.connectionId)).toContain(connectionId);
    // The token reaches nobody but the page: only its hash is stored.
    expect(await h.feeds.findByToken(token!)).toMatchObject({ connectionId });

    // The preview answers "not yet" until the first sync lands, then lists the free time still ahead.
    const before = JSON.parse((await h.get(`/feeds/${token}/preview.json`)).text) as { ready: boolean };
    expect(before.ready).toBe(false);
    await h.syncNow(connectionId);
    const after = JSON.parse((await h.get(`/feeds/${token}/preview.json`)).text) as {
      ready: boolean;
      view: string;
      events: { title: string; start: string; end: string }[];
    };
    expect(after.ready).toBe(true);
    expect(after.view).toBe('free');
    expect(after.events.length).toBeGreaterThan(0);
    expect(after.events.every((e) => e.title === 'Free' && e.end > h.sync.clock.now().toISOString())).toBe(
      true,
    );
    // Blocks, not stacked offers: none overlaps or touches the next.
    for (let i = 1; i < after.events.length; i++) {
      expect(after.events[i]!.start > after.events[i - 1]!.end).toBe(true);
    }
  });

  it('updates the same account on reconnect instead of duplicating it, and keeps its feed', async () => {
    const email = emails[1]!;
    const first = await h.connectViaWeb(email);
    const counts = await stored();
    const second = await h.connectViaWeb(email);
    expect(second.connectionId).toBe(first.connectionId);
    expect(second.token).toBeNull();
    expect(second.page.text).toContain('existing');
    expect(second.page.text).toContain('keep');
    expect(await stored()).toEqual(counts);
    // The first feed URL still answers.
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
    expect((await h.get(callback, { accept: 'text/html' })).status).toBe(200);
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
    expect((await h.get(used.toString())).status).toBe(200);
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
