// The abuse limits with their Redis gone: two web apps ("processes") share counts through a redis-server of
// this test's own; it is SIGKILLed, and each app keeps limiting from its own memory (requests are neither
// let through unlimited nor failed); sign-in sessions answer 503 while the bearer token still works; a
// fresh, empty Redis on the same port takes the counting back. The requests are OAuth callbacks that carry
// no state (a 400 that needs no store), so only the limit decides between 400 and 429.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import type { RedisClient } from '../../src/lib/redis-connection.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { buildWebApp } from '../../src/web/app.js';
import { MAX_FAILURES } from '../../src/web/admin/sign-in-lockout.js';
import { waitFor } from '../support/wait-for.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { startOwnRedis, type OwnRedis } from './chaos-support.js';

const PER_MINUTE = 5;

let h: WebHarness;
let own: OwnRedis;
let redisA: RedisClient;
let redisB: RedisClient;
let appA: FastifyInstance;
let appB: FastifyInstance;
const logLines: string[] = [];

beforeAll(async () => {
  h = await createWebHarness('chaos_limits', { logLines });
  own = await startOwnRedis();
  redisA = createRedisConnection(own.url, 'command', 'limits-a');
  redisB = createRedisConnection(own.url, 'command', 'limits-b');
  await Promise.all([redisA.ping(), redisB.ping()]);
  const settings = {
    ...h.deps.settings,
    rateLimits: { ...h.deps.settings.rateLimits, connectPerMinute: PER_MINUTE },
  };
  appA = await buildWebApp({ ...h.deps, settings, redis: redisA });
  appB = await buildWebApp({ ...h.deps, settings, redis: redisB });
});
afterAll(async () => {
  await appA?.close();
  await appB?.close();
  redisA?.disconnect();
  redisB?.disconnect();
  await own?.stop();
  await h?.close();
});

const callback = (app: FastifyInstance, remoteAddress: string) =>
  app.inject({ url: '/oauth/callback?error=access_denied', remoteAddress }).then((r) => r.statusCode);

async function statuses(app: FastifyInstance, remoteAddress: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await callback(app, remoteAddress));
  return out;
}

describe('rate limits when Redis fails', () => {
  it('count across processes while Redis answers', async () => {
    expect(await statuses(appA, '192.0.2.1', 3)).toEqual([400, 400, 400]);
    expect(await statuses(appB, '192.0.2.1', 3)).toEqual([400, 400, 429]);
  });

  it('keep limiting from memory, per process, once Redis is killed', async () => {
    await own.kill();
    await waitFor(
      () => Promise.resolve(redisA.status),
      (status) => status !== 'ready',
      { timeoutMs: 10_000, intervalMs: 20, what: 'the client to notice Redis is gone' },
    );
    expect(await statuses(appA, '192.0.2.2', PER_MINUTE + 2)).toEqual([
      ...Array(PER_MINUTE).fill(400),
      429,
      429,
    ]);
    // The other process counts on its own: memory is not shared.
    expect(await statuses(appB, '192.0.2.2', 1)).toEqual([400]);
    const warnings = logLines.filter((line) => line.includes('rate limits counted in memory'));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThanOrEqual(2);
  });

  it('lock out admin token guesses from memory, refuse cookie sign-in with 503, and let the bearer token in', async () => {
    const remoteAddress = '192.0.2.3';
    const guesses: number[] = [];
    for (let i = 0; i <= MAX_FAILURES; i++) {
      const r = await appA.inject({
        url: '/admin',
        remoteAddress,
        headers: { authorization: `Bearer guess-${i}` },
      });
      guesses.push(r.statusCode);
    }
    expect(guesses).toEqual([...Array(MAX_FAILURES).fill(401), 429]);
    const signIn = await appA.inject({
      method: 'POST',
      url: '/admin/login',
      remoteAddress: '192.0.2.4',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: h.url,
        accept: 'application/json',
      },
      payload: new URLSearchParams({ token: ADMIN_TOKEN, next: '/' }).toString(),
    });
    expect(signIn.statusCode).toBe(503);
    expect(signIn.headers['retry-after']).toBe('30');
    const bearer = await appA.inject({
      url: '/admin',
      remoteAddress: '192.0.2.4',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'application/json' },
    });
    expect(bearer.statusCode).toBe(200);
  });

  it('count in Redis again once a fresh Redis answers', async () => {
    await own.restart();
    await waitFor(
      () => Promise.resolve([redisA.status, redisB.status]),
      (status) => status.every((s) => s === 'ready'),
      { timeoutMs: 15_000, intervalMs: 20, what: 'both clients to reconnect' },
    );
    expect(await statuses(appA, '192.0.2.5', 3)).toEqual([400, 400, 400]);
    expect(await statuses(appB, '192.0.2.5', 3)).toEqual([400, 400, 429]);
    expect(logLines.some((line) => line.includes('rate limits counted in Redis'))).toBe(true);
  });
});
