// Real Redis for tests, with a key prefix of the test file's own so files can run side by side.
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../src/lib/redis-connection.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestRedis {
  url: string;
  prefix: string;
  connection: RedisClient;
  /** Deletes every key under the prefix and closes the connection. */
  cleanup(): Promise<void>;
}

/** `url`: another Redis than the shared one (a benchmark that reads a whole server's memory brings its own). */
export async function createTestRedis(label: string, url = TEST_REDIS_URL): Promise<TestRedis> {
  const prefix = `slotfeed-test:${label}:${randomBytes(4).toString('hex')}`;
  const connection = createRedisConnection(url, 'command', `test-${label}`);
  await connection.ping();
  return {
    url,
    prefix,
    connection,
    async cleanup() {
      let cursor = '0';
      do {
        const [next, keys] = await connection.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
        if (keys.length > 0) await connection.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await connection.quit();
    },
  };
}
