// Abusers kept out, on the real web role with real Redis: a /connect flood from one address is capped (and
// so are the OAuth states it may leave in Redis), forged callbacks are capped, admin token guesses lock their
// address out and make one log line each, a signed-out session cookie stops working everywhere, and Bull
// Board's page has our security headers, no external font and a link back. Each scenario comes from client
// addresses of its own, through the loopback "proxy" (TRUST_PROXY=127.0.0.1).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OAUTH_STATES_PER_ADDRESS } from '../../src/web/owner/oauth-state.js';
import { buildWebApp } from '../../src/web/app.js';
import { MAX_FAILURES } from '../../src/web/admin/sign-in-lockout.js';
import { ADMIN_TOKEN, createWebHarness, type RawResponse, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
const logLines: string[] = [];

beforeAll(async () => {
  h = await createWebHarness('sec_abuse', { logLines, webEnv: { TRUST_PROXY: '127.0.0.1' } });
});
afterAll(async () => {
  await h?.close();
});

const from = (address: string, headers: Record<string, string> = {}) => ({
  'x-forwarded-for': address,
  ...headers,
});

async function keysMatching(pattern: string): Promise<string[]> {
  const redis = h.sync.redis.connection;
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(
      cursor,
      'MATCH',
      `${h.sync.config.redis.prefix}:${pattern}`,
      'COUNT',
      1000,
    );
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

const countBy = (responses: RawResponse[]) =>
  responses.reduce<Record<number, number>>(
    (counts, r) => ({ ...counts, [r.status]: (counts[r.status] ?? 0) + 1 }),
    {},
  );

const parsedLines = () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe('the connect flow under a flood', () => {
  it('caps /connect at 20 a minute per address: the rest get 429 with Retry-After, and Redis holds 20 states', async () => {
    const address = '203.0.113.10';
    const responses: RawResponse[] = [];
    // 500 requests, 25 at a time: as fast as this client can send them.
    for (let batch = 0; batch < 20; batch++) {
      responses.push(
        ...(await Promise.all(Array.from({ length: 25 }, () => h.get('/connect', from(address))))),
      );
    }
    expect(countBy(responses)).toEqual({ 302: 20, 429: 480 });
    const refused = responses.find((r) => r.status === 429)!;
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(JSON.parse(refused.text)).toMatchObject({ error: 'too_many_requests' });
    expect(await keysMatching('oauth-state:*')).toHaveLength(20);
    // Another address is not held up by this one.
    expect((await h.get('/connect', from('203.0.113.11'))).status).toBe(302);

    // The flood makes one warning, not 480 lines: refusals are logged at debug.
    const lines = parsedLines().filter((line) => line.url === '/connect' || line.limit === 'connect');
    expect(lines.filter((line) => line.msg === 'rate limit exceeded')).toHaveLength(1);
    expect(lines.filter((line) => line.status === 429)).toHaveLength(0);
    // What the flood left in Redis: 20 states and the per-address sets, a few KB (the flood of the issue: 34 MB).
    const memory = await Promise.all(
      (await keysMatching('oauth-state*')).map((key) => h.sync.redis.connection.memory('USAGE', key)),
    );
    expect(memory.reduce<number>((sum, bytes) => sum + (bytes ?? 0), 0)).toBeLessThan(12_000);
  });

  it(`keeps at most ${OAUTH_STATES_PER_ADDRESS} unfinished sign-ins per address, and a finished one frees its place`, async () => {
    // The same app without the request limit, so the bound on states is what answers.
    const app = await buildWebApp({
      ...h.deps,
      settings: { ...h.deps.settings, rateLimits: { ...h.deps.settings.rateLimits, connectPerMinute: 0 } },
    });
    try {
      const remoteAddress = '203.0.113.20';
      const statuses: number[] = [];
      const locations: string[] = [];
      for (let i = 0; i < OAUTH_STATES_PER_ADDRESS + 10; i++) {
        const response = await app.inject({ url: '/connect', remoteAddress });
        statuses.push(response.statusCode);
        if (response.statusCode === 302) locations.push(String(response.headers.location));
        else {
          expect(response.statusCode).toBe(429);
          expect(Number(response.headers['retry-after'])).toBeGreaterThan(500);
          expect(response.body).toContain('Too many sign-ins are unfinished from your address');
        }
      }
      expect(statuses.filter((s) => s === 302)).toHaveLength(OAUTH_STATES_PER_ADDRESS);
      const byClient = await keysMatching('oauth-states-of:203.0.113.20');
      expect(await h.sync.redis.connection.zcard(byClient[0]!)).toBe(OAUTH_STATES_PER_ADDRESS);

      // A callback spends its state whatever else it says, and the address may start another sign-in.
      const state = new URL(locations[0]!).searchParams.get('state')!;
      const callback = await app.inject({
        url: `/oauth/callback?state=${state}&error=access_denied`,
        remoteAddress,
      });
      expect(callback.statusCode).toBe(400);
      expect((await app.inject({ url: '/connect', remoteAddress })).statusCode).toBe(302);
      expect((await app.inject({ url: '/connect', remoteAddress })).statusCode).toBe(429);
    } finally {
      await app.close();
    }
  });

  it('caps forged callbacks at 20 a minute per address', async () => {
    const responses: RawResponse[] = [];
    for (let i = 0; i < 30; i++) {
      responses.push(await h.get(`/oauth/callback?state=${'f'.repeat(43)}${i}&code=x`, from('203.0.113.30')));
    }
    expect(countBy(responses)).toEqual({ 400: 20, 429: 10 });
  });
});

describe('feeds', () => {
  it('stop a scraper at FEED_RATE_LIMIT_PER_MINUTE, counted in memory, with no X-RateLimit headers on feeds', async () => {
    const { token } = await h.connectViaWeb(h.sync.sim.users[1]!.email);
    const app = await buildWebApp({
      ...h.deps,
      settings: { ...h.deps.settings, rateLimits: { ...h.deps.settings.rateLimits, feedsPerMinute: 5 } },
    });
    try {
      const served = await app.inject({ url: `/feeds/${token}.ics`, remoteAddress: '203.0.113.40' });
      expect(served.statusCode).toBe(200);
      expect(Object.keys(served.headers).filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const guess = await app.inject({
          url: `/feeds/${'G'.repeat(42)}${i}.ics`,
          remoteAddress: '203.0.113.40',
        });
        statuses.push(guess.statusCode);
        if (guess.statusCode === 429) expect(Number(guess.headers['retry-after'])).toBeGreaterThan(0);
      }
      expect(statuses).toEqual([404, 404, 404, 404, 429, 429]);
      // A calendar service's next address is served as before.
      expect(
        (await app.inject({ url: `/feeds/${token}.ics`, remoteAddress: '203.0.113.41' })).statusCode,
      ).toBe(200);
      expect(await keysMatching('rate-limit:*feeds*')).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe('admin token guessing', () => {
  const signIn = (address: string, token: string) =>
    h.request('POST', '/admin/login', {
      headers: from(address, { 'content-type': 'application/x-www-form-urlencoded', origin: h.url }),
      body: new URLSearchParams({ token, next: '/' }).toString(),
    });

  it(`locks an address out after ${MAX_FAILURES} wrong tokens, even from the right one, with one log line per guess`, async () => {
    const address = '198.51.100.40';
    const before = logLines.length;
    const wrong: number[] = [];
    for (let i = 0; i < MAX_FAILURES; i++)
      wrong.push((await signIn(address, `guess-${i}-${'x'.repeat(30)}`)).status);
    expect(wrong).toEqual(Array(MAX_FAILURES).fill(401));

    const locked = await signIn(address, `guess-late-${'x'.repeat(30)}`);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(14 * 60);
    expect(locked.text).toContain('Too many wrong tokens from your address');
    // While locked out, the right token gets no further: answering it would let the guessing go on.
    const right = await signIn(address, ADMIN_TOKEN);
    expect(right.status).toBe(429);
    expect(right.headers['set-cookie']).toBeUndefined();
    // Nor does a bearer header from that address; from any other address the token works.
    const bearer = { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'application/json' };
    expect((await h.get('/admin', from(address, bearer))).status).toBe(429);
    expect((await h.get('/admin', from('198.51.100.41', bearer))).status).toBe(200);
    expect((await signIn('198.51.100.42', ADMIN_TOKEN)).status).toBe(303);

    // One line per request, never a second one for the same guess; the guesses at warn, with their count.
    const lines = logLines
      .slice(before)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.url === '/admin/login' && String(line.msg) !== 'rate limit exceeded');
    const fromAddress = lines.slice(0, MAX_FAILURES);
    expect(fromAddress.map((line) => [line.level, line.status, line.failures])).toEqual(
      Array.from({ length: MAX_FAILURES }, (_, i) => [40, 401, i + 1]),
    );
    expect(fromAddress[MAX_FAILURES - 1]!.lockedForSeconds).toBeGreaterThan(14 * 60);
    expect(logLines.slice(before).join('')).not.toContain('admin sign-in with a wrong token');
    expect(logLines.slice(before).join('')).not.toContain(ADMIN_TOKEN);
  });

  it('counts wrong bearer tokens on any admin route the same way', async () => {
    const address = '198.51.100.50';
    const statuses: number[] = [];
    for (let i = 0; i < MAX_FAILURES + 3; i++) {
      const response = await h.get(
        '/admin/queues/api/queues',
        from(address, { authorization: `Bearer nope-${i}` }),
      );
      statuses.push(response.status);
    }
    expect(statuses).toEqual([...Array(MAX_FAILURES).fill(401), 429, 429, 429]);
  });

  it('a concurrent flood of guesses gets five checked, the rest refused unread, and a line for each checked one', async () => {
    // Bearer headers: no per-route ceiling in front, so only the lockout stands between them and the check.
    const before = logLines.length;
    const responses = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        h.get('/admin/queues/api/queues', from('198.51.100.60', { authorization: `Bearer flood-${i}` })),
      ),
    );
    expect(countBy(responses)).toEqual({ 401: MAX_FAILURES, 429: 400 - MAX_FAILURES });
    // The flood's own lines: on a loaded machine another part of the web role may say something meanwhile
    // (the feed change listener missing a heartbeat), which is not about the guesses.
    const lines = logLines
      .slice(before)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.url === '/admin/queues/api/queues');
    expect(lines.filter((line) => line.level === 40)).toHaveLength(MAX_FAILURES);
    expect(lines.filter((line) => (line.level as number) >= 30)).toHaveLength(MAX_FAILURES);
  });
});

describe('signing out', () => {
  it('ends the session on the server: a copy of the old cookie is refused, other sessions go on', async () => {
    const address = '198.51.100.70';
    const login = async () => {
      const response = await h.request('POST', '/admin/login', {
        headers: from(address, { 'content-type': 'application/x-www-form-urlencoded', origin: h.url }),
        body: new URLSearchParams({ token: ADMIN_TOKEN, next: '/' }).toString(),
      });
      expect(response.status).toBe(303);
      return String(response.headers['set-cookie']?.[0]).split(';')[0]!;
    };
    const cookie = await login();
    const other = await login();
    const page = (c: string) => h.get('/admin', from(address, { cookie: c, accept: 'application/json' }));
    expect((await page(cookie)).status).toBe(200);

    const logout = await h.request('POST', '/admin/logout', {
      headers: from(address, { cookie, origin: h.url, 'content-type': 'application/x-www-form-urlencoded' }),
      body: '',
    });
    expect(logout.status).toBe(303);
    expect(String(logout.headers['set-cookie']?.[0])).toMatch(/^slotfeed_admin=;/);

    // The copied cookie, replayed as it was: refused on the page, the API and Bull Board.
    expect((await page(cookie)).status).toBe(401);
    expect((await h.get('/admin/queues/api/queues', from(address, { cookie }))).status).toBe(401);
    expect((await page(other)).status).toBe(200);
    // What Redis holds would not work as a cookie: only hashes of session ids.
    const sessions = await keysMatching('admin-session:*');
    expect(sessions.length).toBeGreaterThan(0);
    const id = decodeURIComponent(cookie.split('=')[1]!).split('.')[1]!;
    expect(sessions.join()).not.toContain(id);
  });
});

describe('Bull Board', () => {
  it('has our security headers, no external font, and a link back to the admin page', async () => {
    const bearer = { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'text/html' };
    const page = await h.get('/admin/queues', from('198.51.100.80', bearer));
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).not.toMatch(/https?:/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('same-origin');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).not.toMatch(/fonts\.(googleapis|gstatic)\.com/);
    expect(page.text).not.toMatch(/<link[^>]+href=["']?(https?:)?\/\//i);
    const uiConfig = JSON.parse(
      /<script id="__UI_CONFIG__" type="application\/json">(.*?)<\/script>/s.exec(page.text)![1]!,
    );
    expect(uiConfig.miscLinks).toEqual([{ text: '← slotfeed admin', url: '/admin' }]);

    const api = await h.get(
      '/admin/queues/api/queues',
      from('198.51.100.80', { authorization: bearer.authorization }),
    );
    expect(api.status).toBe(200);
    expect(api.headers['x-content-type-options']).toBe('nosniff');
    expect(api.headers['cache-control']).toBe('no-store');
  });
});

describe('owner sign-in under a flood', () => {
  it('caps /signin at 20 a minute per address too', async () => {
    const address = '203.0.113.30';
    const responses = await Promise.all(Array.from({ length: 30 }, () => h.get('/signin', from(address))));
    expect(countBy(responses)).toEqual({ 302: 20, 429: 10 });
    expect((await h.get('/signin', from('203.0.113.31'))).status).toBe(302);
  });
});
