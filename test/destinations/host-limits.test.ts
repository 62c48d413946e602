// The per-host limits on a real Redis (issue 35): slots shared by every worker, none left for a host whose slots
// are all taken, and a host that asked to come back later (Retry-After) held back as a whole until then, 6 h at
// most. A Redis that fails while slots are being taken leaves none of them taken.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createHostLimits,
  isHostWait,
  type HostLimits,
  type HostSlots,
} from '../../src/destinations/host-limits.js';
import { CalDavHeldBackError } from '../../src/caldav/errors.js';
import { RETRY_AFTER_MAX_MS } from '../../src/destinations/push-policy.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { startOwnRedis } from '../chaos/chaos-support.js';
import { createTestRedis, type TestRedis } from '../support/redis.js';
import { startRedisFaultProxy } from '../support/redis-fault-proxy.js';

let redis: TestRedis;
/** Two workers' views of the same limits: what one holds, the other cannot take. */
let workerA: HostLimits;
let workerB: HostLimits;

beforeAll(async () => {
  redis = await createTestRedis('host_limits');
  const settings = {
    concurrency: 3,
    perSecond: 0,
    slotTimeoutMs: 60_000,
    keyPrefix: `${redis.prefix}:caldav-host`,
  };
  workerA = createHostLimits(redis.connection, settings);
  workerB = createHostLimits(redis.connection, settings);
});
afterAll(async () => {
  await redis?.cleanup();
});

describe('per-host slots', () => {
  it('share one limit across workers: a push gets the lanes left, the next none until one is released', async () => {
    const first = (await workerA.enter('dav.example.com', 2)) as HostSlots;
    expect(first.lanes).toBe(2);
    const second = (await workerB.enter('dav.example.com', 4)) as HostSlots;
    expect(second.lanes).toBe(1);
    const third = await workerA.enter('dav.example.com', 4);
    expect(isHostWait(third) && third.reason).toBe('busy');
    // Another host is not touched by this one's slots.
    const elsewhere = await workerB.enter('cal.example.org', 4);
    expect(isHostWait(elsewhere) ? 0 : elsewhere.lanes).toBe(3);

    await first.release();
    const after = (await workerB.enter('dav.example.com', 4)) as HostSlots;
    expect(after.lanes).toBe(2);
    await Promise.all([second.release(), after.release(), (elsewhere as HostSlots).release()]);
  });

  it('a host held back (a 429 or 503 with Retry-After) gets no push, for any worker, until the time given', async () => {
    await workerA.holdBack('busy.example.net', 30_000);
    const held = await workerB.enter('busy.example.net', 4);
    expect(isHostWait(held)).toBe(true);
    if (!isHostWait(held)) return;
    expect(held.reason).toBe('held back');
    expect(held.retryInMs).toBeGreaterThan(25_000);
    expect(held.retryInMs).toBeLessThanOrEqual(30_000);
    const other = await workerB.enter('other.example.net', 1);
    expect(isHostWait(other)).toBe(false);
    if (!isHostWait(other)) await other.release();
  });

  it('a Retry-After of a year holds the host no longer than a destination’s own retry is put off (6 h)', async () => {
    await workerA.holdBack('far.example.net', 365 * 24 * 3600_000);
    const held = await workerB.enter('far.example.net', 1);
    expect(isHostWait(held)).toBe(true);
    if (!isHostWait(held)) return;
    expect(held.reason).toBe('held back');
    expect(held.retryInMs).toBeLessThanOrEqual(RETRY_AFTER_MAX_MS);
    expect(held.retryInMs).toBeGreaterThan(RETRY_AFTER_MAX_MS - 60_000);
  });
});

describe('a hold of a year already in Redis (set before holds were capped)', () => {
  it('puts a push off 6 h at most, whether it meets it entering or before a request', async () => {
    const host = 'old.example.net';
    await redis.connection.set(
      `${redis.prefix}:caldav-host:rate:${host}:paused-until`,
      String(Date.now() + 365 * 24 * 3600_000),
    );
    const held = await workerA.enter(host, 1);
    expect(isHostWait(held) && held.retryInMs).toBeLessThanOrEqual(RETRY_AFTER_MAX_MS);
    const refused = await workerA.pace(host).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CalDavHeldBackError);
    expect((refused as CalDavHeldBackError).retryInMs).toBeLessThanOrEqual(RETRY_AFTER_MAX_MS);
  });
});

describe('a Redis that fails in the middle of taking slots', () => {
  it('lets go of the slots already taken: the next push gets every slot of the host', async () => {
    // A redis-server of the test's own behind a proxy that fails one command there, never the shared one.
    const own = await startOwnRedis();
    const proxy = await startRedisFaultProxy(own);
    const connection = createRedisConnection(proxy.url, 'command', 'test-host-limits-fault');
    try {
      const limits = createHostLimits(connection, {
        concurrency: 3,
        perSecond: 0,
        slotTimeoutMs: 60_000,
        keyPrefix: 'faulty:caldav-host',
      });
      const host = 'dav.example.com';
      // Once through, so that the slot script is loaded and each slot is one command from now on.
      await ((await limits.enter(host, 1)) as HostSlots).release();
      let slotsAsked = 0;
      proxy.failOnce(
        ([name, , , key]) =>
          /^EVAL(SHA)?$/i.test(name!) &&
          key?.endsWith(`:caldav-host:slots:${host}`) === true &&
          ++slotsAsked === 2,
      );
      await expect(limits.enter(host, 3)).rejects.toThrow(/SLOTFEED-INJECTED-FAULT/i);
      const next = await limits.enter(host, 3);
      expect(isHostWait(next) ? 0 : next.lanes).toBe(3);
      if (!isHostWait(next)) await next.release();
    } finally {
      connection.disconnect();
      await proxy.close();
      await own.stop();
    }
  });
});
