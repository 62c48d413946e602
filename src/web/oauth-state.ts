// OAuth `state` for the connect flow: random, kept in Redis with a short TTL next to the PKCE verifier it
// belongs to, and single-use: GETDEL reads and deletes in one step, so a replayed callback (or two tabs
// racing with the same state) finds nothing the second time. Redis, not a cookie, because the callback
// may reach a different web process than the one that started the flow.
import type { Redis } from 'ioredis';
import { z } from 'zod';

export const OAUTH_STATE_TTL_SECONDS = 10 * 60;

// What buildAuthorizationRequest makes is 43 base64url characters; anything else was never ours, and a
// bound on it keeps arbitrary client input out of Redis key names.
const STATE_SHAPE = /^[A-Za-z0-9_-]{16,128}$/;

const pendingSchema = z.object({ codeVerifier: z.string().optional(), startedAt: z.string() });
export type PendingAuthorization = z.infer<typeof pendingSchema>;

export interface OAuthStateStore {
  save(state: string, pending: PendingAuthorization): Promise<void>;
  /** The pending authorization, removed in the same step; undefined when unknown, expired or used. */
  take(state: string): Promise<PendingAuthorization | undefined>;
}

export function createOAuthStateStore(
  redis: Redis,
  keyPrefix: string,
  ttlSeconds = OAUTH_STATE_TTL_SECONDS,
): OAuthStateStore {
  const keyOf = (state: string) => `${keyPrefix}:oauth-state:${state}`;
  return {
    async save(state, pending) {
      if (!STATE_SHAPE.test(state)) throw new Error('refusing to store a malformed OAuth state');
      // NX: a collision of 256-bit random states would mean a broken random source; fail loudly then.
      const stored = await redis.set(keyOf(state), JSON.stringify(pending), 'EX', ttlSeconds, 'NX');
      if (stored !== 'OK') throw new Error('OAuth state collision');
    },
    async take(state) {
      if (!STATE_SHAPE.test(state)) return undefined;
      const raw = await redis.getdel(keyOf(state));
      if (raw === null) return undefined;
      const parsed = pendingSchema.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : undefined;
    },
  };
}
