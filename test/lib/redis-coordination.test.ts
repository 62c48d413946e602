import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRedisRateLimiter } from '../../src/lib/redis-rate-limiter.js';
import { LockTimeoutError, withRedisLock } from '../../src/lib/redis-lock.js';
import { createTestRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await createTestRedis('coordination');
});
afterAll(async () => {
  await redis.cleanup();
});

describe('withRedisLock', () => {
  it('lets one holder at a time run, and the next one after it', async () => {
    const key = `${redis.prefix}:lock:a`;
    const events: string[] = [];
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = withRedisLock(redis.connection, key, { ttlMs: 5000, waitMs: 5000 }, async () => {
      events.push('first in');
      await firstHolds;
      events.push('first out');
    });
    await new Promise((r) => setTimeout(r, 50));
    const second = withRedisLock(redis.connection, key, { ttlMs: 5000, waitMs: 5000 }, async () => {
      events.push('second in');
    });
    await new Promise((r) => setTimeout(r, 100));
    releaseFirst();
    await Promise.all([first, second]);
    expect(events).toEqual(['first in', 'first out', 'second in']);
    expect(await redis.connection.exists(key)).toBe(0);
  });

  it('gives up after the bounded wait', async () => {
    const key = `${redis.prefix}:lock:b`;
    await redis.connection.set(key, 'someone-else', 'PX', 10_000);
    await expect(
      withRedisLock(redis.connection, key, { ttlMs: 1000, waitMs: 120 }, async () => 1),
    ).rejects.toThrow(LockTimeoutError);
  });

  it('does not delete a lock that expired and was taken by another owner', async () => {
    const key = `${redis.prefix}:lock:c`;
    await withRedisLock(redis.connection, key, { ttlMs: 50, waitMs: 100 }, async () => {
      await new Promise((r) => setTimeout(r, 120));
      await redis.connection.set(key, 'new-owner', 'PX', 10_000);
    });
    expect(await redis.connection.get(key)).toBe('new-owner');
  });
});

describe('createRedisRateLimiter', () => {
  it('lets the burst through at once and then makes the next call wait', async () => {
    const waits: number[] = [];
    const limiter = createRedisRateLimiter(redis.connection, `${redis.prefix}:rl:a`, {
      perSecond: 10,
      burst: 3,
      // Record each wait Redis asks for; a call that had to wait shows up in the list.
      sleep: async (ms) => {
        waits.push(ms);
        await new Promise((r) => setTimeout(r, ms));
      },
    });
    for (let i = 0; i < 3; i++) await limiter.acquire();
    expect(waits).toEqual([]);
    await limiter.acquire();
    expect(waits.length).toBeGreaterThan(0);
    expect(waits[0]).toBeGreaterThan(0);
    expect(waits[0]).toBeLessThanOrEqual(100);
  });

  it('pauses every caller after a 429 until Retry-After has passed', async () => {
    const waits: number[] = [];
    const limiter = createRedisRateLimiter(redis.connection, `${redis.prefix}:rl:b`, {
      perSecond: 0,
      burst: 1,
      sleep: async (ms) => {
        waits.push(ms);
        await new Promise((r) => setTimeout(r, ms));
      },
    });
    await limiter.acquire();
    expect(waits).toEqual([]);
    await limiter.pauseAll(300);
    await limiter.acquire();
    expect(waits[0]).toBeGreaterThan(200);
    expect(waits[0]).toBeLessThanOrEqual(300);
  });

  it('records each grant in its audit stream when asked to, at the Redis time of the grant', async () => {
    const key = `${redis.prefix}:rl:c`;
    const limiter = createRedisRateLimiter(redis.connection, key, { perSecond: 0, burst: 1, audit: true });
    const before = Date.now();
    for (let i = 0; i < 3; i++) await limiter.acquire();
    const grants = await redis.connection.xrange(`${key}:grants`, '-', '+');
    expect(grants).toHaveLength(3);
    for (const [id] of grants) expect(Math.abs(Number(id.split('-')[0]) - before)).toBeLessThan(5000);
    expect(await redis.connection.exists(`${redis.prefix}:rl:a:grants`)).toBe(0);
  });
});
