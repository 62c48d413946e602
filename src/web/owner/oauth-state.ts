// OAuth `state` for the connect flow: random, kept in Redis with a short TTL next to the PKCE verifier it
// belongs to, and single-use: GETDEL reads and deletes in one step, so a replayed callback (or two tabs
// racing with the same state) finds nothing the second time. Redis, not a cookie, because the callback
// may reach a different web process than the one that started the flow.
// Each client address may have at most OAUTH_STATES_PER_ADDRESS unfinished sign-ins at once (a sorted set per
// address, scored by expiry, checked and written in one script): one client once made 118,921 states in
// 20 s, 34 MB held for ten minutes. A finished sign-in frees its place at once.
// While Redis does not answer, both steps fail at once with RedisUnavailableError (a 503 page), instead of
// waiting for it: /connect used to answer 500 after 7 s.
import type { RedisClient } from '../../lib/redis-connection.js';
import { z } from 'zod';
import { whileRedisAnswers } from '../../lib/redis-errors.js';

export const OAUTH_STATE_TTL_SECONDS = 10 * 60;
/** An office behind one address where 50 people are mid-sign-in within ten minutes is already unusual. */
export const OAUTH_STATES_PER_ADDRESS = 50;

// What buildAuthorizationRequest makes is 43 base64url characters; anything else was never ours, and a
// bound on it keeps arbitrary client input out of Redis key names.
const STATE_SHAPE = /^[A-Za-z0-9_-]{16,128}$/;

const pendingSchema = z.object({
  codeVerifier: z.string().optional(),
  startedAt: z.string(),
  /** The address that started the flow, whose count the state occupies. */
  client: z.string().optional(),
  /** Connect (or reconnect) an account, or only sign its owner in to their page; connect when absent. */
  intent: z.enum(['connect', 'sign-in']).optional(),
});
export type PendingAuthorization = z.infer<typeof pendingSchema>;

export type SaveOutcome = { saved: true } | { saved: false; retryAfterSeconds: number };

export interface OAuthStateStore {
  /** Stores a new state for `pending.client`, unless that address already has its fill of unfinished ones. */
  save(state: string, pending: PendingAuthorization & { client: string }): Promise<SaveOutcome>;
  /** The pending authorization, removed in the same step; undefined when unknown, expired or used. */
  take(state: string): Promise<PendingAuthorization | undefined>;
}

// KEYS: the state's key, the address's set. ARGV: value, TTL seconds, cap, state. Redis's own clock scores
// the set, so every web process agrees on what has expired. Returns {1} saved, {0, ms until a place frees}
// full, {-1} the state exists already.
const SAVE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttlMs = tonumber(ARGV[2]) * 1000
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return {0, tonumber(oldest[2]) - now}
end
if not redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') then
  return {-1, 0}
end
redis.call('ZADD', KEYS[2], now + ttlMs, ARGV[4])
redis.call('PEXPIRE', KEYS[2], ttlMs)
return {1, 0}
`;

export function createOAuthStateStore(
  redis: RedisClient,
  keyPrefix: string,
  options: { ttlSeconds?: number; perAddress?: number } = {},
): OAuthStateStore {
  const ttlSeconds = options.ttlSeconds ?? OAUTH_STATE_TTL_SECONDS;
  const perAddress = options.perAddress ?? OAUTH_STATES_PER_ADDRESS;
  const keyOf = (state: string) => `${keyPrefix}:oauth-state:${state}`;
  const clientKeyOf = (client: string) => `${keyPrefix}:oauth-states-of:${client}`;
  return {
    async save(state, pending) {
      if (!STATE_SHAPE.test(state)) throw new Error('refusing to store a malformed OAuth state');
      const [outcome, waitMs] = (await whileRedisAnswers(redis, () =>
        redis.eval(
          SAVE_SCRIPT,
          2,
          keyOf(state),
          clientKeyOf(pending.client),
          JSON.stringify(pending),
          ttlSeconds,
          perAddress,
          state,
        ),
      )) as [number, number];
      // A collision of 256-bit random states would mean a broken random source; fail loudly then.
      if (outcome === -1) throw new Error('OAuth state collision');
      if (outcome === 0) return { saved: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
      return { saved: true };
    },
    async take(state) {
      if (!STATE_SHAPE.test(state)) return undefined;
      const raw = await whileRedisAnswers(redis, () => redis.getdel(keyOf(state)));
      if (raw === null) return undefined;
      const parsed = pendingSchema.safeParse(JSON.parse(raw));
      if (!parsed.success) return undefined;
      // Should Redis go between the two steps, the place frees itself when the state would have expired.
      const client = parsed.data.client;
      if (client !== undefined) {
        await whileRedisAnswers(redis, () => redis.zrem(clientKeyOf(client), state)).catch(() => undefined);
      }
      return parsed.data;
    },
  };
}
