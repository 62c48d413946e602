// Every admin route and every part of Bull Board (page, JSON API, static files, job actions), asked without
// credentials, with a wrong bearer token, with forged or expired session cookies and through path tricks:
// always a 401 (JSON for programs, the login form for browsers) or a 404, never a byte of data, and no
// action takes effect. The same requests with the real token do get data, so the check can fail.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FakeClock } from '../support/sync-harness.js';
import { ADMIN_TOKEN, createWebHarness, type RawResponse, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

let h: WebHarness;
let connectionId: string;
let feedId: string;
let feedToken: string;
let jobId: string;
let secrets: string[];

beforeAll(async () => {
  // Every wrong credential below comes from an address of its own (through the loopback "proxy"): five wrong
  // tokens from one address lock it out (429, sign-in-lockout.ts; tested in abuse-limits.test.ts), and this
  // file is about what each kind of wrong credential gets on its own.
  h = await createWebHarness('sec_admin', { webEnv: { TRUST_PROXY: '127.0.0.1' } });
  const email = h.sync.sim.users[0]!.email;
  const connected = await h.connectViaWeb(email);
  connectionId = connected.connectionId;
  feedToken = connected.token!;
  await h.syncNow(connectionId);
  feedId = (await h.feeds.list({ connectionId }))[0]!.id;
  const [job] = await h.deps.syncQueue.getJobs(['waiting', 'prioritized', 'delayed']);
  jobId = String(job?.id);
  // What no refused answer may contain: who is connected, their ids, the queue's jobs.
  // (Job ids are small numbers, found in any text; the jobs carry the connection id.)
  secrets = [email, connectionId, feedId, h.sync.sim.users[0]!.name];
});
afterAll(async () => {
  await h?.close();
});

const routes = (): [method: string, path: string][] => [
  ['GET', '/admin'],
  ['HEAD', '/admin'],
  ['GET', '/admin?notice=sync-queued'],
  ['POST', `/admin/connections/${connectionId}/sync`],
  ['POST', `/admin/connections/${connectionId}/disable`],
  ['POST', `/admin/connections/${connectionId}/enable`],
  ['POST', `/admin/connections/${connectionId}/feeds`],
  ['POST', `/admin/feeds/${feedId}/rotate`],
  ['POST', `/admin/feeds/${feedId}/revoke`],
  ['GET', '/admin/queues'],
  ['GET', '/admin/queues/'],
  ['GET', '/admin/queues/queue/sync'],
  ['GET', '/admin/queues/api/queues'],
  ['GET', '/admin/queues/api/queues?activeQueue=sync&status=waiting&page=1'],
  ['GET', `/admin/queues/api/queues/sync/${jobId}`],
  ['GET', `/admin/queues/api/queues/sync/${jobId}/logs`],
  ['GET', `/admin/queues/api/queues/sync/${jobId}/flow`],
  ['GET', '/admin/queues/api/redis/stats'],
  ['GET', '/admin/queues/api/job-schedulers'],
  ['GET', '/admin/queues/api/queues/sync/workers'],
  ['GET', '/admin/queues/api/queues/sync/job-data-schema'],
  ['POST', '/admin/queues/api/queues/sync/add'],
  ['PUT', '/admin/queues/api/queues/sync/promote'],
  ['PUT', '/admin/queues/api/queues/sync/retry/failed'],
  ['PUT', '/admin/queues/api/queues/pause'],
  ['PUT', '/admin/queues/api/queues/sync/obliterate'],
  ['PUT', '/admin/queues/api/queues/sync/pause'],
  ['PUT', '/admin/queues/api/queues/sync/clean/completed'],
  ['PUT', '/admin/queues/api/queues/sync/empty'],
  ['GET', '/admin/queues/static/js/main.js'],
  ['GET', '/admin/queues/static/favicon-32x32.png'],
];

// Path spellings a proxy or router might read as the admin area.
const tricks = (): string[] => [
  '//admin/queues/api/queues',
  '/admin//queues/api/queues',
  '/admin/queues/../queues/api/queues',
  '/%61dmin/queues/api/queues',
  '/admin/queues/api/queues/',
  '/admin/queues/api/queues;x',
  '/admin/queues/api/queues?x=/../',
  '/ADMIN/QUEUES/api/queues',
  '/admin/%71ueues/api/queues',
];

const wrongCredentials = (): [string, Record<string, string>][] => [
  ['nothing', {}],
  ['a wrong bearer token', { authorization: 'Bearer not-the-admin-token-at-all' }],
  ['the token with one character more', { authorization: `Bearer ${ADMIN_TOKEN}x` }],
  [
    'the token as Basic credentials',
    { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
  ],
  ['the token in a cookie of its own', { cookie: `slotfeed_admin=${ADMIN_TOKEN}` }],
  ['an unsigned session cookie', { cookie: 'slotfeed_admin=v1.99999999999999' }],
  [
    'a session cookie with a forged signature',
    { cookie: 'slotfeed_admin=v1.99999999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
  ],
  ['a wrong bearer token next to nothing else', { authorization: 'Bearer ' }],
];

let nextAddress = 0;
/** A fresh client address from 198.18.0.0/15 (set aside for tests), one per request. */
const freshAddress = () => {
  const n = nextAddress++;
  return `198.18.${(n >> 8) & 255}.${n & 255}`;
};

async function send(method: string, path: string, headers: Record<string, string>, accept: string) {
  return h.request(method, path, {
    headers: {
      accept,
      origin: h.url,
      'content-type': 'application/x-www-form-urlencoded',
      'x-forwarded-for': freshAddress(),
      ...headers,
    },
    ...(method === 'POST' || method === 'PUT' ? { body: 'days=7&merge=true' } : {}),
  });
}

function expectRefusedWithoutData(response: RawResponse, what: string) {
  const status = { what, status: response.status };
  expect([401, 404]).toContain(status.status);
  expect(status.status === 401 || !what.includes('route')).toBe(true);
  for (const secret of secrets)
    expect({ what, leaked: response.text.includes(secret) }).toEqual({ what, leaked: false });
  expect(response.headers['set-cookie']).toBeUndefined();
}

async function nothingHappened() {
  const connection = await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
  expect(connection.status).toBe('active');
  expect(await h.feeds.list({ connectionId })).toHaveLength(1);
  expect((await h.get(`/feeds/${feedToken}.ics`)).status).toBe(200);
  expect(await h.deps.syncQueue.isPaused()).toBe(false);
  expect(await h.deps.syncQueue.getJob(jobId)).toBeDefined();
}

describe('without valid credentials', () => {
  it(
    'every admin route and Bull Board endpoint answers 401 with no data, for programs and browsers',
    async () => {
      const enqueued = h.enqueued.length;
      for (const [name, headers] of wrongCredentials()) {
        for (const [method, path] of routes()) {
          for (const accept of ['application/json', 'text/html']) {
            const response = await send(method, path, headers, accept);
            expect({ route: `${method} ${path}`, name, status: response.status }).toEqual({
              route: `${method} ${path}`,
              name,
              status: 401,
            });
            expectRefusedWithoutData(response, `route ${method} ${path} with ${name}`);
            if (accept === 'text/html' && method === 'GET') expect(response.text).toContain('name="token"');
          }
        }
      }
      expect(h.enqueued.length).toBe(enqueued);
      await nothingHappened();
    },
    patient(60_000),
  );

  it('path tricks end at the guard or at a 404, never at data', async () => {
    for (const path of tricks()) {
      const response = await send('GET', path, {}, 'application/json');
      expectRefusedWithoutData(response, `trick ${path}`);
    }
    await nothingHappened();
  });

  it('an expired session cookie is refused', async () => {
    const login = await h.request('POST', '/admin/login', {
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: h.url },
      body: new URLSearchParams({ token: ADMIN_TOKEN, next: '/admin' }).toString(),
    });
    const cookie = String(login.headers['set-cookie']?.[0] ?? '').split(';')[0]!;
    expect((await send('GET', '/admin/queues/api/queues', { cookie }, 'application/json')).status).toBe(200);
    (h.sync.clock as FakeClock).advance(12 * 3600 + 1);
    const expired = await send('GET', '/admin/queues/api/queues', { cookie }, 'application/json');
    expect(expired.status).toBe(401);
    expectRefusedWithoutData(expired, 'route with an expired cookie');
  });
});

describe('with the admin token (the control)', () => {
  it('the same requests get data', async () => {
    const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const page = await send('GET', '/admin', bearer, 'text/html');
    expect(page.status).toBe(200);
    expect(page.text).toContain(secrets[0]);
    const queues = await send(
      'GET',
      '/admin/queues/api/queues?activeQueue=sync&status=waiting',
      bearer,
      'application/json',
    );
    expect(queues.status).toBe(200);
    expect(queues.text).toContain(connectionId);
  });
});
