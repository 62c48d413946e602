// The sessions of account owners signed in to their own page (/me) with Calendbook. Like admin sessions
// (admin-sessions.ts): the cookie carries a random id, Redis keeps a hash of it for the session's lifetime, and
// signing out deletes it, so a copied cookie stops working at once. Each session is bound to one connection,
// and the hashes of a connection's sessions are kept in a set of their own, so "delete my data" can end every
// one of them, on every device, in one step.
import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient } from '../../lib/redis-connection.js';
import { whileRedisAnswers } from '../../lib/redis-errors.js';

export const OWNER_COOKIE = 'slotfeed_owner';
const SESSION_ID = /^[A-Za-z0-9_-]{32}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface OwnerSessions {
  /** A new session for the owner of this connection; returns the cookie's value. */
  start(connectionId: string): Promise<string>;
  /** The connection the session belongs to while it is live; undefined for an unknown, ended or expired one. */
  connectionOf(id: string): Promise<string | undefined>;
  end(id: string): Promise<void>;
  /** Ends every session of the connection (its owner deleted their data). */
  endAll(connectionId: string): Promise<void>;
}

export function createOwnerSessions(
  redis: RedisClient,
  keyPrefix: string,
  lifetimeSeconds: number,
): OwnerSessions {
  const hashOf = (id: string) => createHash('sha256').update(id).digest('base64url');
  const sessionKey = (hash: string) => `${keyPrefix}:owner-session:${hash}`;
  const setKey = (connectionId: string) => `${keyPrefix}:owner-sessions-of:${connectionId}`;

  return {
    async start(connectionId) {
      const id = randomBytes(24).toString('base64url');
      const hash = hashOf(id);
      await whileRedisAnswers(redis, () =>
        redis
          .multi()
          .set(sessionKey(hash), connectionId, 'EX', lifetimeSeconds)
          .sadd(setKey(connectionId), hash)
          .expire(setKey(connectionId), lifetimeSeconds)
          .exec(),
      );
      return id;
    },
    async connectionOf(id) {
      if (!SESSION_ID.test(id)) return undefined;
      const connectionId = await whileRedisAnswers(redis, () => redis.get(sessionKey(hashOf(id))));
      return connectionId !== null && UUID.test(connectionId) ? connectionId : undefined;
    },
    async end(id) {
      if (!SESSION_ID.test(id)) return;
      const hash = hashOf(id);
      const connectionId = await whileRedisAnswers(redis, () => redis.get(sessionKey(hash)));
      await whileRedisAnswers(redis, () => {
        const steps = redis.multi().del(sessionKey(hash));
        if (connectionId !== null) steps.srem(setKey(connectionId), hash);
        return steps.exec();
      });
    },
    async endAll(connectionId) {
      const hashes = await whileRedisAnswers(redis, () => redis.smembers(setKey(connectionId)));
      await whileRedisAnswers(redis, () =>
        redis
          .multi()
          .del(...hashes.map(sessionKey), setKey(connectionId))
          .exec(),
      );
    },
  };
}
