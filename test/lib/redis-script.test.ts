// The rate limiter runs once per upstream call, so its Lua script goes by SHA1 (EVALSHA) and its body crosses
// the wire only when a server does not know it. Against a redis-server of the test's own (SCRIPT FLUSH and
// command statistics are server-wide), on a spare port.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createRedisRateLimiter } from '../../src/lib/redis-rate-limiter.js';
import { startOwnRedis, type OwnRedis } from '../chaos/chaos-support.js';

let server: OwnRedis;
let redis: Redis;
beforeAll(async () => {
  server = await startOwnRedis();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

/** How often each scripting command ran, from INFO commandstats. */
async function scriptCalls(): Promise<{ eval: number; evalsha: number }> {
  const stats = await redis.info('commandstats');
  const calls = (command: string) =>
    Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  return { eval: calls('eval'), evalsha: calls('evalsha') };
}

it('sends the limiter script by its hash, its body only when the server has lost it', async () => {
  const limiter = createRedisRateLimiter(redis, 'script-test', { perSecond: 0, burst: 1 });
  for (let i = 0; i < 20; i++) await limiter.acquire();
  const before = await scriptCalls();
  // ioredis's first call of a script is one EVAL (the server has never seen it); every later one is by hash.
  expect(before.eval).toBeLessThanOrEqual(1);
  expect(before.evalsha + before.eval).toBeGreaterThanOrEqual(20);

  await redis.script('FLUSH');
  await limiter.acquire();
  await limiter.pauseAll(1);
  for (let i = 0; i < 5; i++) await limiter.acquire();
  const after = await scriptCalls();
  // The flush's NOSCRIPT costs each script one EVAL, and the limiter goes on.
  expect(after.eval - before.eval).toBeLessThanOrEqual(2);
  expect(after.evalsha - before.evalsha).toBeGreaterThanOrEqual(5);
});
