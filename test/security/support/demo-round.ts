// A full demo round through slotfeed's real composition (composeSlotfeed → startRoles with the
// web and worker roles), logging at debug level into memory: several simulated users connect through
// /connect → the simulator's /auth/login → /oauth/callback, the worker syncs them, their feeds are fetched,
// feed URLs are rotated and created from admin, and OAuth tokens are refreshed twice with refresh-token
// rotation on (short access-token lifetime, the shared fake clock moved past it). Every credential the
// simulator issued and every feed token slotfeed showed is recorded, for the leak checks to look for.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { loadConfig } from '../../../src/config.js';
import { Releasers } from '../../../src/lib/releasers.js';
import { createLogger } from '../../../src/log.js';
import { DAEMON_SECTIONS } from '../../../src/composition/daemon-config.js';
import type { Slotfeed } from '../../../src/composition/roles.js';
import { composeSlotfeed, startRoles } from '../../../src/main.js';
import {
  startSimulator,
  type IssuedCredential,
  type RunningSimulator,
} from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { createTestRedis, type TestRedis } from '../../support/redis.js';
import { FakeClock } from '../../support/sync-harness.js';
import { waitFor } from '../../support/wait-for.js';
import { FEED_TOKEN_IN_PAGE, rawRequest, type RawResponse } from '../../support/web-harness.js';
import type { NamedSecret } from './secret-forms.js';
import { reservePort } from '../../support/reserved-port.js';

export const ROUND_ADMIN_TOKEN = 'admin-token-for-the-secrets-round-0123';
const ACCESS_TOKEN_TTL_SECONDS = 900;
const USERS = 4;

export interface DemoRound {
  url: string;
  db: TestDatabase;
  redis: TestRedis;
  sim: RunningSimulator;
  slotfeed: Slotfeed;
  /** Every JSON line slotfeed logged during the round, at debug level and above. */
  logLines: string[];
  issued: IssuedCredential[];
  /** Every feed token slotfeed showed (callback pages, admin create and rotate), rotated-out ones included. */
  feedTokens: string[];
  /** Secrets of the installation itself: client secret, admin token, encryption key. */
  configSecrets: NamedSecret[];
  /** What the round did, so a test can check it did what it claims (syncs, refreshes, feeds served). */
  counts: { connections: number; feedFetches: number; refreshes: number; syncRuns: number };
  close(): Promise<void>;
}

function expectStatus(response: RawResponse, status: number, what: string): RawResponse {
  if (response.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${response.status}: ${response.text.slice(0, 300)}`);
  }
  return response;
}

export async function runDemoRound(label: string): Promise<DemoRound> {
  const clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));
  const port = await reservePort();
  const origin = `http://127.0.0.1:${port}`;
  const issued: IssuedCredential[] = [];
  const logLines: string[] = [];
  const feedTokens: string[] = [];
  const releasers = new Releasers();

  const db = await createTestDatabase(label);
  const redis = await createTestRedis(label);
  const sim = await startSimulator({
    users: USERS,
    seed: 23,
    redirectUris: [`${origin}/oauth/callback`],
    now: clock.now,
    accessTokenTtlSeconds: ACCESS_TOKEN_TTL_SECONDS,
    rotateRefreshTokens: true,
    onCredentialIssued: (credential) => issued.push(credential),
  });
  const encryptionKey = randomBytes(32).toString('base64');
  const config = loadConfig(
    {
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      REDIS_PREFIX: redis.prefix,
      LOG_LEVEL: 'debug',
      CALENDBOOK_BASE_URL: sim.baseUrl,
      CALENDBOOK_AUTH_URL: sim.authUrl,
      CALENDBOOK_CLIENT_ID: sim.clientId,
      CALENDBOOK_CLIENT_SECRET: sim.clientSecret,
      CALENDBOOK_REDIRECT_URI: `${origin}/oauth/callback`,
      CALENDBOOK_TIMEOUT_MS: '5000',
      TOKEN_ENCRYPTION_KEY: encryptionKey,
      TOKEN_REFRESH_MARGIN_SECONDS: '300',
      SYNC_BACKOFF_MS: '50',
      UPSTREAM_RATE_LIMIT_PER_SECOND: '0',
      WORKER_LOCK_SECONDS: '5',
      SHUTDOWN_GRACE_SECONDS: '5',
      WEB_HOST: '127.0.0.1',
      WEB_PORT: String(port),
      PUBLIC_BASE_URL: origin,
      ADMIN_TOKEN: ROUND_ADMIN_TOKEN,
    },
    DAEMON_SECTIONS,
  );
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    }),
  });
  const slotfeed = composeSlotfeed(config, releasers, logger, clock);
  await startRoles(['worker', 'web'], config, slotfeed, releasers, clock);

  const close = async () => {
    await releasers.releaseAll();
    await sim.close();
    await redis.cleanup();
    await db.drop();
  };

  const admin = { authorization: `Bearer ${ROUND_ADMIN_TOKEN}` };
  const get = (path: string, headers: Record<string, string> = {}) =>
    rawRequest('GET', path.startsWith('http') ? path : `${origin}${path}`, { headers });
  const post = (path: string, fields: Record<string, string> = {}) =>
    rawRequest('POST', `${origin}${path}`, {
      headers: { ...admin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  const activeFeedTokens: string[] = [];
  const newTokenIn = (page: RawResponse, what: string) => {
    const token = FEED_TOKEN_IN_PAGE.exec(page.text)?.[1];
    if (token === undefined) throw new Error(`${what}: no feed URL on the page`);
    feedTokens.push(token);
    return token;
  };
  const syncRuns = () => db.prisma.syncRun.count({ where: { outcome: 'succeeded' } });
  /** Waits until the worker has nothing queued or running. */
  const queueSettled = () =>
    waitFor(
      () => slotfeed.clients.syncQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
      (counts) => Object.values(counts).every((n) => n === 0),
      { what: 'an idle sync queue' },
    );

  try {
    // Connect every simulated user through the web flow; the callback enqueues the first sync.
    const connectionIds: string[] = [];
    for (const user of sim.users) {
      const start = expectStatus(
        await get(`/connect?login_hint=${encodeURIComponent(user.email)}`),
        302,
        '/connect',
      );
      const login = expectStatus(await get(String(start.headers.location)), 302, 'simulator login');
      const callback = expectStatus(
        await get(String(login.headers.location), { accept: 'text/html' }),
        303,
        'callback',
      );
      // The callback signs the owner in and sends them to their page, which shows the feed's URL.
      const cookie = String(callback.headers['set-cookie']?.[0] ?? '').split(';')[0]!;
      const page = expectStatus(await get('/me', { accept: 'text/html', cookie }), 200, 'owner page');
      activeFeedTokens.push(newTokenIn(page, 'owner page'));
      const connection = await db.prisma.connection.findFirstOrThrow({ where: { email: user.email } });
      connectionIds.push(connection.id);
    }
    await waitFor(syncRuns, (n) => n >= USERS, { what: 'the first syncs' });
    await queueSettled();

    let feedFetches = 0;
    const fetchEveryFeed = async () => {
      for (const token of activeFeedTokens) {
        const feed = expectStatus(
          await get(`/feeds/${token}.ics`, { 'accept-encoding': 'gzip' }),
          200,
          'feed',
        );
        expectStatus(
          await get(`/feeds/${token}.ics`, { 'if-none-match': String(feed.headers.etag) }),
          304,
          'revalidation',
        );
        feedFetches += 2;
      }
    };
    await fetchEveryFeed();

    // Admin: rotate one feed URL (the old one must stop working), create one with options.
    const firstFeed = (await slotfeed.stores.feeds.list({ connectionId: connectionIds[0] }))[0];
    if (!firstFeed) throw new Error('the first connection has no feed');
    const rotated = newTokenIn(
      expectStatus(await post(`/admin/feeds/${firstFeed.id}/rotate`), 200, 'rotate'),
      'rotate page',
    );
    expectStatus(await get(`/feeds/${activeFeedTokens[0]}.ics`), 404, 'the rotated-out feed URL');
    activeFeedTokens[0] = rotated;
    activeFeedTokens.push(
      newTokenIn(
        expectStatus(
          await post(`/admin/connections/${connectionIds[1]}/feeds`, { days: '14', merge: 'true' }),
          200,
          'create',
        ),
        'create page',
      ),
    );
    expectStatus(await get('/admin', admin), 200, 'admin page');

    // Two rounds of refresh with rotation: move past the access token's lifetime, sync everyone from admin.
    const refreshesBefore = issued.filter((c) => c.kind === 'refresh_token').length;
    for (let round = 0; round < 2; round++) {
      clock.advance(ACCESS_TOKEN_TTL_SECONDS);
      const runsBefore = await syncRuns();
      for (const id of connectionIds)
        expectStatus(await post(`/admin/connections/${id}/sync`), 303, 'sync now');
      await waitFor(syncRuns, (n) => n >= runsBefore + USERS, { what: 'the refresh syncs' });
      await queueSettled();
    }
    const refreshes = issued.filter((c) => c.kind === 'refresh_token').length - refreshesBefore;

    // A reconnect (new grant, same connection and feed), then the feeds again.
    const again = sim.users[2]!;
    const start = await get(`/connect?login_hint=${encodeURIComponent(again.email)}`);
    const login = await get(String(start.headers.location));
    expectStatus(await get(String(login.headers.location), { accept: 'text/html' }), 303, 'reconnect');
    await waitFor(syncRuns, (n) => n >= 3 * USERS + 1, { what: 'the reconnect sync' });
    await queueSettled();
    await fetchEveryFeed();
    await get('/healthz');
    await get('/metrics');

    return {
      url: origin,
      db,
      redis,
      sim,
      slotfeed,
      logLines,
      issued,
      feedTokens,
      configSecrets: [
        { name: 'client secret', value: sim.clientSecret },
        { name: 'admin token', value: ROUND_ADMIN_TOKEN },
        { name: 'encryption key', value: encryptionKey },
        { name: 'encryption key bytes', value: Buffer.from(encryptionKey, 'base64').toString('base64url') },
      ],
      counts: { connections: connectionIds.length, feedFetches, refreshes, syncRuns: await syncRuns() },
      close,
    };
  } catch (thrown: unknown) {
    await close().catch(() => undefined);
    throw thrown;
  }
}
