// Admin sign-in sessions that end when the administrator signs out. The cookie carries a random session id
// (signed, so it cannot be made up); Redis holds which ids are live, for the session's lifetime. Signing out
// deletes the id, so a copy of the cookie (another browser, a proxy log, a stolen laptop's profile) stops
// working at once instead of at its expiry. Redis, not Postgres: a session is checked on every admin request,
// including Bull Board's polling, and expires by itself. Only a hash of the id is stored, so what Redis holds
// cannot be replayed as a cookie. While Redis does not answer, every step fails at once (RedisUnavailableError)
// rather than waiting for it.
import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient } from '../../lib/redis-connection.js';
import { whileRedisAnswers } from '../../lib/redis-errors.js';

export interface AdminSessions {
  /** A new live session id. */
  start(): Promise<string>;
  /** True while the session was started here and neither ended nor expired; rejects when Redis cannot say. */
  isLive(id: string): Promise<boolean>;
  end(id: string): Promise<void>;
}

const SESSION_ID = /^[A-Za-z0-9_-]{22,64}$/;

export function createAdminSessions(
  redis: RedisClient,
  keyPrefix: string,
  lifetimeSeconds: number,
): AdminSessions {
  const keyOf = (id: string) =>
    `${keyPrefix}:admin-session:${createHash('sha256').update(id).digest('base64url')}`;
  return {
    async start() {
      const id = randomBytes(24).toString('base64url');
      await whileRedisAnswers(redis, () => redis.set(keyOf(id), '1', 'EX', lifetimeSeconds));
      return id;
    },
    async isLive(id) {
      if (!SESSION_ID.test(id)) return false;
      return (await whileRedisAnswers(redis, () => redis.exists(keyOf(id)))) === 1;
    },
    async end(id) {
      if (SESSION_ID.test(id)) await whileRedisAnswers(redis, () => redis.del(keyOf(id)));
    },
  };
}
