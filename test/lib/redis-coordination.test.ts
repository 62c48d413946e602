import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRedisRateLimiter, SLEEP_STEP_MS } from '../../src/lib/redis-rate-limiter.js';
import { LockLostError, LockTimeoutError, withRedisLock } from '../../src/lib/redis-lock.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { createTestRedis, TEST_REDIS_URL, type TestRedis } from '../support/redis.js';

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

  it('keeps the lock past its TTL while the work runs, so a contender waits for the release', async () => {
    const key = `${redis.prefix}:lock:renewed`;
    // Long enough for a loaded machine's stalls of the event loop (a ci-check saw a 100 ms lock lapse under one):
    // renewed every third of the TTL, the lock is lost by design to a stall of two thirds of it after a renewal.
    const ttlMs = 1_000;
    const events: string[] = [];
    // The holder works until the contender, by its own count, has waited three TTLs for the lock (or got in).
    let contenderWaitedLong!: () => void;
    const contenderWaited = new Promise<void>((resolve) => (contenderWaitedLong = resolve));
    let waitedMs = 0;
    const contenderSleep = async (ms: number) => {
      waitedMs += ms;
      if (waitedMs >= 3 * ttlMs) contenderWaitedLong();
      await new Promise((r) => setTimeout(r, ms));
    };
    let holding!: () => void;
    const firstHolds = new Promise<void>((resolve) => (holding = resolve));
    const first = withRedisLock(redis.connection, key, { ttlMs, waitMs: 10_000 }, async (lock) => {
      events.push('first in');
      holding();
      await contenderWaited;
      events.push(lock.signal.aborted ? 'first lost the lock' : 'first out');
    });
    await firstHolds;
    const second = withRedisLock(
      redis.connection,
      key,
      { ttlMs, waitMs: 10_000, sleep: contenderSleep },
      async () => {
        events.push('second in');
        contenderWaitedLong(); // in early: the holder's lock lapsed under it
      },
    );
    await Promise.all([first, second]);
    expect(events).toEqual(['first in', 'first out', 'second in']);
    expect(await redis.connection.exists(key)).toBe(0);
  });

  it('tells the work when another owner took the lock, and leaves that owner its lock', async () => {
    const key = `${redis.prefix}:lock:c`;
    const reason = await withRedisLock(redis.connection, key, { ttlMs: 150, waitMs: 100 }, async (lock) => {
      // As after a stall longer than the TTL: the lock expired and another process took it.
      await redis.connection.set(key, 'new-owner', 'PX', 10_000);
      await once(lock.signal, 'abort');
      return lock.signal.reason as unknown;
    });
    expect(reason).toBeInstanceOf(LockLostError);
    expect(await redis.connection.get(key)).toBe('new-owner');
  });
});

/** An audited grant's `at`: the Redis time its call was scheduled to go. */
const grantedAt = (fields: string[]) => Number(fields[fields.indexOf('at') + 1]);

/** A connection of the test's own whose commands are counted (a script run is one). */
function countedConnection() {
  const connection = createRedisConnection(TEST_REDIS_URL, 'command', 'test-counted');
  let sent = 0;
  const send = connection.sendCommand.bind(connection) as (...args: unknown[]) => unknown;
  connection.sendCommand = ((...args: unknown[]) => {
    sent++;
    return send(...args);
  }) as typeof connection.sendCommand;
  return { connection, sent: () => sent };
}

describe('createRedisRateLimiter', () => {
  it('gives callers queued at the rate a turn each: two script runs a call at most, the turns the rate apart', async () => {
    const { connection, sent } = countedConnection();
    try {
      const key = `${redis.prefix}:rl:queue`;
      const limiter = createRedisRateLimiter(connection, key, { perSecond: 50, burst: 1, audit: true });
      await connection.ping();
      const before = sent();
      const callers = 20;
      await Promise.all(Array.from({ length: callers }, () => limiter.acquire()));
      // Each reserves its turn and, having waited, asks once whether a 429 paused the calls meanwhile. Told only
      // when the next turn came, the waiters each asked again at every turn: 210 runs for these 20.
      expect(sent() - before).toBeLessThanOrEqual(2 * callers);
      const turns = (await redis.connection.xrange(`${key}:grants`, '-', '+')).map(([, f]) => grantedAt(f));
      expect(turns).toHaveLength(callers);
      for (let i = 1; i < turns.length; i++) expect(turns[i]! - turns[i - 1]!).toBeGreaterThanOrEqual(20);
    } finally {
      connection.disconnect();
    }
  });

  it('holds back a call whose reserved turn comes while a 429 pauses the calls', async () => {
    const steps: number[] = [];
    const limiter: ReturnType<typeof createRedisRateLimiter> = createRedisRateLimiter(
      redis.connection,
      `${redis.prefix}:rl:paused-turn`,
      {
        // A turn every 8 s: the second call's is reserved (within RESERVE_AHEAD_MS) however slow the machine.
        perSecond: 0.125,
        burst: 1,
        // No time passes; a 429 comes during the first step of the reserved wait.
        sleep: async (ms) => {
          steps.push(ms);
          if (steps.length === 1) await limiter.pauseAll(60_000);
        },
        monotonicMs: () => 0,
      },
    );
    await limiter.acquire();
    // Asked whether it may go unless paused, a call whose turn came in a pause is told how long it lasts.
    expect(await limiter.acquireUnlessPaused()).toBeGreaterThan(50_000);
    const reservedWait = steps.reduce((sum, ms) => sum + ms, 0);
    expect(reservedWait).toBeGreaterThan(0);
    expect(reservedWait).toBeLessThanOrEqual(8000);
    for (const step of steps) expect(step).toBeLessThanOrEqual(SLEEP_STEP_MS);
  });

  it('gives up a turn it woke too late for and asks for another, so a stalled process never bursts', async () => {
    const steps: number[] = [];
    let clock = 0;
    const limiter = createRedisRateLimiter(redis.connection, `${redis.prefix}:rl:late`, {
      perSecond: 0.25,
      burst: 1,
      // Each step takes no Redis time; the first wakes 60 s late, as after a stall of the process.
      sleep: async (ms) => {
        steps.push(ms);
        clock += ms + (steps.length === 1 ? 60_000 : 0);
      },
      monotonicMs: () => clock,
    });
    await limiter.acquire();
    await limiter.acquire();
    // The late turn (4 s ahead) was given up and the next one (8 s ahead) reserved and waited for.
    const waited = steps.reduce((sum, ms) => sum + ms, 0);
    expect(waited).toBeGreaterThan(4000);
    expect(waited).toBeLessThanOrEqual(4000 + 8000);
  });

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

  it('waits out a long pause (a Retry-After of a year) in short steps, asking Redis once a step, until aborted', async () => {
    const steps: number[] = [];
    const shutdown = new AbortController();
    const limiter = createRedisRateLimiter(redis.connection, `${redis.prefix}:rl:year`, {
      perSecond: 0,
      burst: 1,
      // No time passes: each step is recorded, and the third ends the wait as a shutdown would.
      sleep: async (ms) => {
        steps.push(ms);
        if (steps.length === 3) shutdown.abort(new Error('shutting down'));
      },
    });
    await limiter.pauseAll(365 * 24 * 3600_000);
    await expect(limiter.acquire(shutdown.signal)).rejects.toThrow('shutting down');
    expect(steps).toHaveLength(3);
    for (const step of steps) expect(step).toBeLessThanOrEqual(SLEEP_STEP_MS);
  });

  it('a shutdown ends a wait for a pause at once, mid-sleep', async () => {
    const limiter = createRedisRateLimiter(redis.connection, `${redis.prefix}:rl:hour`, {
      perSecond: 0,
      burst: 1,
    });
    await limiter.pauseAll(3600_000);
    const shutdown = new AbortController();
    const waiting = limiter.acquire(shutdown.signal);
    shutdown.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');
  });

  it('records each grant in its audit stream when asked to, at the Redis time of the grant', async () => {
    const key = `${redis.prefix}:rl:c`;
    const limiter = createRedisRateLimiter(redis.connection, key, { perSecond: 0, burst: 1, audit: true });
    const before = Date.now();
    for (let i = 0; i < 3; i++) await limiter.acquire();
    const grants = await redis.connection.xrange(`${key}:grants`, '-', '+');
    expect(grants).toHaveLength(3);
    for (const [, fields] of grants) expect(Math.abs(grantedAt(fields) - before)).toBeLessThan(5000);
    expect(await redis.connection.exists(`${redis.prefix}:rl:a:grants`)).toBe(0);
  });
});
