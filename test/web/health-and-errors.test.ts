// /healthz, readiness (with Postgres or Redis gone: feeds need only Postgres, the rest of the web role Redis
// too), /metrics, and the one error handler: 4xx bodies that say what was wrong, 5xx bodies that say nothing
// about internals.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import net from 'node:net';
import { Redis } from 'ioredis';
import { createConnectionAdminStore } from '../../src/store/connection-admin.js';
import { createFeedStore } from '../../src/store/feeds.js';
import { pgSessionsFor } from '../../src/composition/clients.js';
import { createPostgresProbe } from '../../src/store/postgres-probe.js';
import { createPrismaClient } from '../../src/store/prisma-client.js';
import { buildWebApp } from '../../src/web/app.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
const logLines: string[] = [];
// Nothing listens on port 1: connections are refused at once.
const deadPrisma = createPrismaClient('postgresql://postgres@127.0.0.1:1/nothing');
const deadProbe = createPostgresProbe(pgSessionsFor('postgresql://postgres@127.0.0.1:1/nothing'));
// A real database without slotfeed's tables: every query fails in a way that is our bug, not an outage.
let unmigrated: TestDatabase;
// A "Redis" that accepts connections and never answers: the connection never becomes ready, and the readiness
// probe says so at once rather than queue a PING behind it.
const silentSockets = new Set<net.Socket>();
const silentServer = net.createServer((socket) => {
  silentSockets.add(socket);
});
let silentRedis: Redis;

beforeAll(async () => {
  h = await createWebHarness('web_health', { logLines });
  unmigrated = await createTestDatabase('web_health_empty', { migrate: false });
  await new Promise<void>((resolve) => silentServer.listen(0, '127.0.0.1', resolve));
  silentRedis = new Redis((silentServer.address() as net.AddressInfo).port, '127.0.0.1', {
    maxRetriesPerRequest: 0,
    protocol: 2,
  });
  silentRedis.on('error', () => undefined);
});
afterAll(async () => {
  silentRedis?.disconnect();
  for (const socket of silentSockets) socket.destroy();
  await new Promise((resolve) => silentServer.close(resolve));
  await deadPrisma.$disconnect().catch(() => undefined);
  await deadProbe.close();
  await unmigrated?.drop();
  await h?.close();
});

describe('health', () => {
  it('/healthz says the process answers', async () => {
    const response = await h.get('/healthz');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toEqual({ status: 'ok' });
  });

  it('is ready when Postgres and Redis answer: /readyz (the feeds), /readyz/feeds and /readyz/web', async () => {
    const response = await h.get('/readyz');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toEqual({ status: 'ready', roles: { feeds: 'ready' }, postgres: 'ok' });
    const feeds = await h.get('/readyz/feeds');
    expect(JSON.parse(feeds.text)).toEqual({ status: 'ready', postgres: 'ok' });
    const web = await h.get('/readyz/web');
    expect(web.status).toBe(200);
    expect(JSON.parse(web.text)).toEqual({ status: 'ready', postgres: 'ok', redis: 'ok' });
  });

  it('is not ready when Postgres is gone; without Redis only /readyz/web is not', async () => {
    const noPostgres = await buildWebApp({ ...h.deps, postgresProbe: deadProbe });
    const noRedis = await buildWebApp({ ...h.deps, redis: silentRedis });
    try {
      const a = await noPostgres.inject({ url: '/readyz/web' });
      expect(a.statusCode).toBe(503);
      expect(a.json()).toEqual({ status: 'not ready', postgres: 'failed', redis: 'ok' });
      // A process that has served no feed has nothing to answer them with from memory.
      const feeds = await noPostgres.inject({ url: '/readyz/feeds' });
      expect(feeds.statusCode).toBe(503);
      expect(feeds.json()).toEqual({ status: 'not ready', postgres: 'failed', lastGoodFeeds: 'none' });
      expect((await noPostgres.inject({ url: '/readyz' })).statusCode).toBe(503);
      const b = await noRedis.inject({ url: '/readyz/web' });
      expect(b.statusCode).toBe(503);
      expect(b.json()).toEqual({ status: 'not ready', postgres: 'ok', redis: 'failed' });
      // Feeds do not use Redis: a replica that serves them stays in the load balancer.
      const c = await noRedis.inject({ url: '/readyz/feeds' });
      expect(c.statusCode).toBe(200);
      expect((await noRedis.inject({ url: '/readyz' })).statusCode).toBe(200);
      // Only the roles the process runs have an endpoint.
      expect((await noRedis.inject({ url: '/readyz/worker' })).statusCode).toBe(404);
    } finally {
      await noPostgres.close();
      await noRedis.close();
    }
  });

  it('/metrics exposes the slotfeed counters and the default Node metrics', async () => {
    const email = h.sync.sim.users[0]!.email;
    const { token } = await h.connectViaWeb(email);
    await h.get(`/feeds/${token}.ics`);
    await h.get(`/feeds/${token}.ics`);
    h.metrics.syncRuns.inc({ outcome: 'succeeded' });
    h.metrics.syncJobDuration.observe({ outcome: 'succeeded' }, 0.3);
    const response = await h.get('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(response.text).toContain('slotfeed_feed_requests_total{status="200"} 2');
    expect(response.text).toContain('slotfeed_feed_render_cache_total{result="miss"} 1');
    expect(response.text).toContain('slotfeed_feed_render_cache_total{result="hit"} 1');
    expect(response.text).toContain(
      'slotfeed_upstream_calls_total{endpoint="POST /oauth2/token",status="200"} 1',
    );
    expect(response.text).toContain('slotfeed_upstream_calls_total{endpoint="GET /users/me",status="200"} 1');
    expect(response.text).toContain('slotfeed_sync_runs_total{outcome="succeeded"} 1');
    expect(response.text).toContain(
      'slotfeed_sync_job_duration_seconds_bucket{le="0.5",outcome="succeeded"} 1',
    );
    expect(response.text).toContain('process_cpu_user_seconds_total');
  });
});

describe('errors', () => {
  it('a 404 says what was not found, as JSON or as a page by Accept', async () => {
    const json = await h.get('/nothing-here', { accept: 'application/json' });
    expect(json.status).toBe(404);
    expect(JSON.parse(json.text)).toEqual({
      error: 'not_found',
      message: 'Nothing here: GET /nothing-here.',
    });
    const page = await h.get('/nothing-here', { accept: 'text/html,application/xhtml+xml' });
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('Nothing here: GET /nothing-here.');
  });

  it('a 4xx from fastify itself keeps its explanation', async () => {
    const response = await h.request('POST', '/admin/login', {
      headers: { 'content-type': 'application/xml', accept: 'application/json' },
      body: '<token/>',
    });
    expect(response.status).toBe(415);
    expect(JSON.parse(response.text)).toMatchObject({ error: 'unsupported_media_type' });
    expect(JSON.parse(response.text).message).toBe(
      'Unsupported Content-Type "application/xml": send forms as application/x-www-form-urlencoded.',
    );
  });

  it('escapes what it echoes', async () => {
    const page = await h.get(
      '/oauth/callback?error=server_error&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E',
      {
        accept: 'text/html',
      },
    );
    expect(page.status).toBe(400);
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.text).not.toContain('<script>alert(1)');
  });

  it('a 5xx says nothing about internals, and the log has the error with the URL redacted', async () => {
    const app = await buildWebApp({ ...h.deps, feeds: createFeedStore(unmigrated.prisma) });
    try {
      const token = 'B'.repeat(43);
      const response = await app.inject({
        url: `/feeds/${token}.ics`,
        headers: { accept: 'application/json' },
      });
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({
        error: 'internal_error',
        message: 'Something went wrong on our side. It has been logged; please try again later.',
      });
      expect(response.body).not.toMatch(/prisma|ECONNREFUSED|postgres|127\.0\.0\.1/i);
      const logged = logLines.filter((line) => line.includes('"request failed"'));
      expect(logged.length).toBeGreaterThan(0);
      expect(logged.join('')).toContain('/feeds/[redacted].ics');
      expect(logged.join('')).not.toContain(token);
    } finally {
      await app.close();
    }
  });

  it('Postgres out of reach is a 503 with Retry-After, saying nothing about internals', async () => {
    // The admin page: feeds have an outage answer of their own (feed-routes.ts); every other route gets this.
    const feeds = createFeedStore(deadPrisma);
    const app = await buildWebApp({
      ...h.deps,
      feeds,
      connectionAdmin: createConnectionAdminStore(deadPrisma, feeds),
    });
    try {
      const response = await app.inject({
        url: '/admin',
        headers: { accept: 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(response.statusCode).toBe(503);
      expect(response.headers['retry-after']).toBe('30');
      expect(response.json()).toEqual({
        error: 'unavailable',
        message: 'The database is busy or unreachable right now; please try again in a minute.',
      });
      expect(response.body).not.toMatch(/prisma|ECONNREFUSED|postgres|127\.0\.0\.1/i);
      // One warning, not an error with a stack: an outage makes every request fail the same known way.
      const logged = logLines.filter((line) => line.includes('"database unavailable"'));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain('"reason":"unreachable"');
      expect(logged[0]).toContain('"level":40');
    } finally {
      await app.close();
    }
  });
});
