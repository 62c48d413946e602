// whileRedisAnswers against real Redis servers: a connection that is not up fails at once, a Redis that hangs
// is given up on, Redis refusing writes (full under noeviction) becomes RedisUnavailableError, and an error of
// the request's own (a wrong type) passes through as it is, to be a 500 rather than a "try again later".
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RedisClient } from '../../src/lib/redis-connection.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import {
  isRedisErrorReply,
  RedisUnavailableError,
  redisUnavailableReason,
  whileRedisAnswers,
} from '../../src/lib/redis-errors.js';
import { redisAnswers } from '../../src/lib/readiness.js';
import { freePort, startOwnRedis, type OwnRedis } from '../chaos/chaos-support.js';

let own: OwnRedis;
let redis: RedisClient;

beforeAll(async () => {
  own = await startOwnRedis();
  redis = createRedisConnection(own.url, 'command', 'redis-errors-test');
  await redis.ping();
});
afterAll(async () => {
  redis?.disconnect();
  await own?.stop();
});

describe('whileRedisAnswers', () => {
  it('answers what Redis answers while it does', async () => {
    expect(await whileRedisAnswers(redis, () => redis.set('k', 'v'))).toBe('OK');
  });

  it('fails at once while the connection is not up, without queueing the command', async () => {
    const nowhere = createRedisConnection(`redis://127.0.0.1:${await freePort()}`, 'command', 'nowhere');
    try {
      const failure = await whileRedisAnswers(nowhere, () => nowhere.get('k')).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(RedisUnavailableError);
      expect(redisUnavailableReason(failure)).toBe('not_connected');
    } finally {
      // Its disconnect timer (2 s) runs out during the next test.
      nowhere.disconnect();
    }
  });

  it('gives up on a Redis that hangs, and so does the readiness probe', async () => {
    // CLIENT PAUSE holds every client's commands on the server for 3 s: a connected Redis that does not answer.
    await redis.call('CLIENT', 'PAUSE', '3000', 'ALL');
    const hung = await whileRedisAnswers(redis, () => redis.get('k'), 200).catch((e: unknown) => e);
    expect(redisUnavailableReason(hung)).toBe('timeout');
    expect(await redisAnswers(redis)).toBe('timeout');
    // The pause ends by itself; the commands held meanwhile are answered.
    expect(await redis.get('k')).toBe('v');
  });

  it('turns Redis refusing writes into RedisUnavailableError, and lets the request’s own errors through', async () => {
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    await redis.config('SET', 'maxmemory', '1');
    try {
      const full = await whileRedisAnswers(redis, () => redis.set('k2', 'v')).catch((e: unknown) => e);
      expect(full).toBeInstanceOf(RedisUnavailableError);
      expect(redisUnavailableReason(full)).toBe('refused_writes');
      expect(isRedisErrorReply((full as Error).cause)).toBe(true);
    } finally {
      await redis.config('SET', 'maxmemory', '0');
    }
    const wrongType = await whileRedisAnswers(redis, () => redis.lpush('k', 'x')).catch((e: unknown) => e);
    expect(wrongType).not.toBeInstanceOf(RedisUnavailableError);
    expect(redisUnavailableReason(wrongType)).toBeUndefined();
    expect((wrongType as Error).message).toMatch(/^WRONGTYPE/);
  });
});
