// Fault: the Redis under running `slotfeed web`, `worker` and `scheduler` processes (real child processes,
// the CLI through tsx) is SIGKILLed and stays down for several reconnect cycles, then comes back empty.
// While it is down: feeds are served as before and /readyz/feeds stays ready (a load balancer keeps the
// replica); /connect, admin actions, cookie sessions and the queue dashboard answer 503 with Retry-After at
// once; the worker and scheduler report not ready; and the processes' logs stay JSON, one line per distinct
// error (before: 1,122 lines in 62 s, most of them "[ioredis] Unhandled error event" and raw stacks, admin
// actions hanging 90 s, /connect 500 after 7 s). After Redis returns everything works again.
// The outage lasts until each process's Redis connection has failed RECONNECT_ATTEMPTS times (read from its
// /metrics, slotfeed_errors_total), not for a fixed time; the log's rate is measured over that span.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { REDIS_RETRY_AFTER_SECONDS } from '../../src/web/error-handler.js';
import { killProcesses, spawnSlotfeed, type SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { ADMIN_TOKEN, rawRequest, type RawResponse } from '../support/web-harness.js';
import { freePort, startOwnRedis, type OwnRedis } from './chaos-support.js';
import { patient } from '../support/patience.js';

/** Failed reconnects of each process's Redis connection before the outage ends (~12 s of ioredis backoff). */
const RECONNECT_ATTEMPTS = 8;
/** What "fails fast" means for a request that needs Redis (typically a few ms; bounded for a loaded box). */
const FAST_MS = 2000;

let redis: OwnRedis;
let h: SyncHarness;
let connectionId: string;
let feedToken: string;
const children: Record<'web' | 'worker' | 'scheduler', SlotfeedProcess> = {} as never;
let webUrl: string;
let workerHealth: string;
let schedulerHealth: string;

async function startChild(args: string[], env: Record<string, string>): Promise<SlotfeedProcess> {
  const child = spawnSlotfeed(args, { ...h.env, LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env });
  await waitFor(
    async () => (child.child.exitCode === null ? child.output() : `exited: ${child.output()}`),
    (out) => out.includes('slotfeed running') || out.startsWith('exited'),
    { timeoutMs: 60_000, what: `slotfeed ${args.join(' ')} to start` },
  );
  if (child.child.exitCode !== null) throw new Error(`slotfeed ${args.join(' ')} exited:\n${child.output()}`);
  return child;
}

beforeAll(async () => {
  redis = await startOwnRedis();
  h = await createSyncHarness('chaos_redis_outage', {
    clock: null,
    simulator: { users: 1 },
    env: { REDIS_URL: redis.url, SYNC_TICK_SECONDS: '1', SYNC_HORIZON_DAYS: '7' },
  });
  connectionId = await h.connect(h.sim.users[0]!.email);
  const { token } = await h.stores.feeds.ensureDefaultFeed(connectionId);
  feedToken = token!;
  const [webPort, workerPort, schedulerPort] = await Promise.all([freePort(), freePort(), freePort()]);
  webUrl = `http://127.0.0.1:${webPort}`;
  workerHealth = `http://127.0.0.1:${workerPort}`;
  schedulerHealth = `http://127.0.0.1:${schedulerPort}`;
  const webEnv = { WEB_PORT: String(webPort), PUBLIC_BASE_URL: webUrl, ADMIN_TOKEN };
  [children.web, children.worker, children.scheduler] = await Promise.all([
    startChild(['web'], webEnv),
    startChild(['worker'], { HEALTH_PORT: String(workerPort) }),
    startChild(['scheduler'], { HEALTH_PORT: String(schedulerPort) }),
  ]);
}, patient(120_000));

afterAll(async () => {
  await killProcesses(Object.values(children).filter(Boolean));
  await h?.close();
  await redis?.stop();
});

const get = (url: string, headers: Record<string, string> = {}) => rawRequest('GET', url, { headers });
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'application/json' };
const syncNow = () =>
  rawRequest('POST', `${webUrl}/admin/connections/${connectionId}/sync`, { headers: bearer });

async function timed(request: Promise<RawResponse>): Promise<RawResponse & { ms: number }> {
  const started = performance.now();
  const response = await request;
  return { ...response, ms: performance.now() - started };
}

async function errorCount(baseUrl: string, source: string): Promise<number> {
  const text = (await get(`${baseUrl}/metrics`)).text;
  const line = text.split('\n').find((l) => l.startsWith(`slotfeed_errors_total{source="${source}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

const succeededRuns = () => h.clients.prisma.syncRun.count({ where: { connectionId, outcome: 'succeeded' } });

function linesSince(process: SlotfeedProcess, offset: number): string[] {
  return process
    .output()
    .slice(offset)
    .split('\n')
    .filter((line) => line.length > 0);
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

describe('Redis killed under web, worker and scheduler processes', () => {
  let cookie: string;
  let feedBefore: RawResponse;

  it('runs normally while Redis answers', async () => {
    await waitFor(succeededRuns, (n) => n >= 1, { timeoutMs: 60_000, what: 'the first scheduled sync' });
    feedBefore = await get(`${webUrl}/feeds/${feedToken}.ics`);
    expect(feedBefore.status).toBe(200);
    const signIn = await rawRequest('POST', `${webUrl}/admin/login`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: webUrl },
      body: new URLSearchParams({ token: ADMIN_TOKEN, next: '/' }).toString(),
    });
    expect(signIn.status).toBe(303);
    cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    for (const url of [
      `${webUrl}/readyz`,
      `${webUrl}/readyz/web`,
      `${workerHealth}/readyz`,
      `${schedulerHealth}/readyz`,
    ]) {
      expect({ url, status: (await get(url)).status }).toEqual({ url, status: 200 });
    }
  });

  it(
    'while Redis is down: feeds served and ready, Redis routes 503 at once, roles not ready, a quiet JSON log',
    async () => {
      const offsets = Object.fromEntries(
        Object.entries(children).map(([role, p]) => [role, p.output().length]),
      );
      const killedAt = performance.now();
      await redis.kill('SIGKILL');
      await waitFor(
        () => get(`${webUrl}/readyz/web`).then((r) => r.status),
        (status) => status === 503,
        { what: 'the web process to notice Redis is gone' },
      );

      const connect = await timed(get(`${webUrl}/connect`, { accept: 'text/html' }));
      expect(connect.status).toBe(503);
      expect(connect.headers['retry-after']).toBe(String(REDIS_RETRY_AFTER_SECONDS));
      expect(connect.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(connect.text).toContain('needs Redis');
      const action = await timed(syncNow());
      expect(action.status).toBe(503);
      expect(JSON.parse(action.text)).toMatchObject({ error: 'unavailable' });
      const session = await timed(get(`${webUrl}/admin`, { cookie, accept: 'text/html' }));
      expect(session.status).toBe(503);
      const board = await timed(get(`${webUrl}/admin/queues/api/queues`, bearer));
      expect(board.status).toBe(503);
      // The admin page itself reads Postgres only: the bearer token still opens it.
      expect((await get(`${webUrl}/admin`, bearer)).status).toBe(200);
      for (const [what, response] of Object.entries({ connect, action, session, board })) {
        expect({ what, fast: response.ms < FAST_MS }).toEqual({ what, fast: true });
      }

      const feed = await get(`${webUrl}/feeds/${feedToken}.ics`);
      expect(feed.status).toBe(200);
      expect(feed.text).toBe(feedBefore.text);
      expect((await get(`${webUrl}/readyz/feeds`)).status).toBe(200);
      expect((await get(`${webUrl}/readyz`)).status).toBe(200);
      const worker = await get(`${workerHealth}/readyz`);
      expect(worker.status).toBe(503);
      expect(JSON.parse(worker.text)).toMatchObject({ roles: { worker: 'not ready' }, redis: 'failed' });
      expect((await get(`${schedulerHealth}/readyz/scheduler`)).status).toBe(503);

      // Several reconnect cycles in every process, counted where they happen.
      const source = 'Redis connection slotfeed';
      for (const base of [webUrl, workerHealth, schedulerHealth]) {
        await waitFor(
          () => errorCount(base, source),
          (n) => n >= RECONNECT_ATTEMPTS,
          { timeoutMs: 60_000, intervalMs: 250, what: `${RECONNECT_ATTEMPTS} failed reconnects at ${base}` },
        );
      }
      const seconds = (performance.now() - killedAt) / 1000;
      const lines = Object.fromEntries(
        Object.entries(children).map(([role, p]) => [role, linesSince(p, offsets[role]!)]),
      );
      const all = Object.values(lines).flat();
      expect(all.filter((line) => !isJson(line))).toEqual([]);
      const errorLines = all.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
      // Each distinct error is logged once per minute: a minute of outage adds at most one more line each.
      const projectedPerMinute = all.length + errorLines.length;
      if (process.env.CHAOS_FIGURES) {
        console.info(
          JSON.stringify({
            seconds,
            reconnects: await Promise.all(
              [webUrl, workerHealth, schedulerHealth].map((b) => errorCount(b, source)),
            ),
            lines: Object.fromEntries(Object.entries(lines).map(([role, l]) => [role, l.length])),
            errorLines: errorLines.length,
            projectedPerMinute,
            ms: { connect: connect.ms, action: action.ms, session: session.ms, board: board.ms },
          }),
        );
      }
      expect(projectedPerMinute).toBeLessThan(50);
    },
    patient(120_000),
  );

  it(
    'once Redis is back (empty): everything works again, and each process says so once',
    async () => {
      const offsets = Object.fromEntries(
        Object.entries(children).map(([role, p]) => [role, p.output().length]),
      );
      await redis.restart();
      for (const url of [`${webUrl}/readyz/web`, `${workerHealth}/readyz`, `${schedulerHealth}/readyz`]) {
        await waitFor(
          () => get(url).then((r) => r.status),
          (status) => status === 200,
          { timeoutMs: 30_000, what: `${url} ready again` },
        );
      }
      expect((await get(`${webUrl}/connect`)).status).toBe(302);
      expect((await get(`${webUrl}/admin`, { cookie, accept: 'text/html' })).status).toBe(401);
      const before = await succeededRuns();
      await waitFor(
        () => syncNow().then((r) => r.status),
        (status) => status === 303,
        { timeoutMs: 30_000, what: 'an admin sync action to be accepted' },
      );
      await waitFor(succeededRuns, (n) => n > before, {
        timeoutMs: 60_000,
        what: 'a sync after Redis returned',
      });
      for (const [role, p] of Object.entries(children)) {
        await waitFor(
          async () =>
            linesSince(p, offsets[role]!).filter((l) => l.includes('Redis connection slotfeed works again')),
          (found) => found.length === 1,
          { timeoutMs: 30_000, what: `${role} to log that Redis works again` },
        );
      }
    },
    patient(120_000),
  );
});
