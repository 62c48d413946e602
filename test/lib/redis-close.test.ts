// Closing a Redis connection whose server no longer answers: a graceful QUIT would wait as long as the silence
// lasts, so the close drops the connection once its bound is over, and ends.
import { describe, expect, it } from '@jest/globals';
import { closeRedisClient } from '../../src/lib/redis-close.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { startFreezableProxy } from '../support/freezable-proxy.js';
import { TEST_REDIS_URL } from '../support/redis.js';

describe('closeRedisClient', () => {
  it('quits a connection that answers', async () => {
    const client = createRedisConnection(TEST_REDIS_URL, 'blocking', 'test-redis-close');
    await client.ping();
    const ended = new Promise((resolve) => client.once('end', resolve));
    await closeRedisClient(client);
    await ended;
  });

  it('drops a connection whose server went silent, and ends', async () => {
    const url = new URL(TEST_REDIS_URL);
    const proxy = await startFreezableProxy({ host: url.hostname, port: Number(url.port || 6379) });
    try {
      // A blocking connection: its commands never give up, so its QUIT would wait for ever.
      const client = createRedisConnection(`redis://127.0.0.1:${proxy.port}`, 'blocking', 'test-redis-close');
      await client.ping();
      proxy.freezeExisting();
      const ended = new Promise((resolve) => client.once('end', resolve));
      await closeRedisClient(client, 200);
      await ended;
      expect(client.status).toBe('end');
    } finally {
      await proxy.close();
    }
  });
});
