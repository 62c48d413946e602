// Fresh access tokens, refreshed ahead of expiry with single flight across processes. With refresh-token
// rotation a refresh token can be spent once: two workers refreshing the same connection at the same moment
// would make one of them fail with invalid_grant, and the auth server may then revoke the whole grant. So a
// refresh happens under a per-connection Redis lock, re-reads the stored tokens once it holds the lock (the
// previous holder may have refreshed already), and persists the new pair before anyone uses it.
// The lock must outlast the work under it, or a second worker (a stalled job re-run) takes it and presents the
// same refresh token: the lock is renewed while held, and the one unbounded wait, the shared rate limit (a 429
// pauses every worker for its Retry-After), happens before the lock is taken. The save is compare-and-set
// against the tokens read under the lock, so a reconnect committed during the refresh keeps its tokens.
import type { RedisClient } from '../lib/redis-connection.js';
import { withRedisLock } from '../lib/redis-lock.js';
import type { RateLimiter } from '../lib/redis-rate-limiter.js';
import type { Logger } from '../log.js';
import type { ConnectionStore, StoredTokens } from '../store/connections.js';
import { UpstreamAuthError, type OAuthClient } from '../upstream/index.js';
import { refreshMarginMs } from './refresh-margin.js';

export class NeedsReauthError extends Error {
  readonly code = 'needs_reauth';
  constructor(connectionId: string, reason: string) {
    super(`connection ${connectionId} needs re-authorisation: ${reason}`);
    this.name = 'NeedsReauthError';
  }
}

export interface TokenRefreshDeps {
  connections: ConnectionStore;
  oauth: Pick<OAuthClient, 'refresh'>;
  /** The shared upstream rate limit: the token endpoint counts against the same per-client limit as the API. */
  limiter: Pick<RateLimiter, 'acquire'>;
  redis: RedisClient;
  keyPrefix: string;
  /** Refresh when the access token expires within this margin (capped by the token's lifetime). */
  marginMs: number;
  now: () => Date;
  logger: Logger;
  /** Aborts the wait for the rate limit (shutdown). */
  signal?: AbortSignal;
  lock?: { ttlMs: number; waitMs: number };
}

export interface RefreshRequest {
  /** The API refused this access token (401): refresh even though it has not expired, unless it was replaced. */
  rejectedAccessToken?: string;
}

const DEFAULT_LOCK = { ttlMs: 30_000, waitMs: 25_000 };
const INVALID_GRANT = 'the refresh token was refused (invalid_grant)';

function isUsable(tokens: StoredTokens, deps: TokenRefreshDeps, request: RefreshRequest): boolean {
  if (request.rejectedAccessToken !== undefined && tokens.accessToken === request.rejectedAccessToken)
    return false;
  const remainingMs = tokens.expiresAt.getTime() - deps.now().getTime();
  return remainingMs > refreshMarginMs(deps.marginMs, tokens.accessToken);
}

/** Returns an access token that is valid for at least the margin, refreshing it if needed. */
export async function refreshIfExpiring(
  deps: TokenRefreshDeps,
  connectionId: string,
  request: RefreshRequest = {},
): Promise<string> {
  const before = await deps.connections.readTokens(connectionId);
  if (isUsable(before, deps, request)) return before.accessToken;

  // Our turn at the rate limit is taken before the lock, never under it. Should the holder of the lock refresh
  // meanwhile, this turn goes unused; that costs less than a lock held through an unbounded wait.
  await deps.limiter.acquire(deps.signal);
  const lockKey = `${deps.keyPrefix}:lock:token-refresh:${connectionId}`;
  return withRedisLock(deps.redis, lockKey, deps.lock ?? DEFAULT_LOCK, async (lock) => {
    const current = await deps.connections.readTokens(connectionId);
    if (isUsable(current, deps, request)) return current.accessToken;
    // The holder before us was refused with these very tokens (a job run twice at once, after a stalled check):
    // presenting them again would only be refused again, and count as one more reuse.
    if (current.refused) throw new NeedsReauthError(connectionId, INVALID_GRANT);
    // A lock lost before the call (this process froze past the TTL) may be someone else's now, and they may
    // be presenting this very refresh token.
    lock.signal.throwIfAborted();
    return refreshAndSave(deps, connectionId, current);
  });
}

/** Spends `current`'s refresh token and stores the new pair, unless newer tokens were committed meanwhile. */
async function refreshAndSave(
  deps: TokenRefreshDeps,
  connectionId: string,
  current: StoredTokens,
): Promise<string> {
  let refreshed;
  try {
    refreshed = await deps.oauth.refresh(current.refreshToken);
  } catch (error: unknown) {
    if (!(error instanceof UpstreamAuthError && error.reason === 'invalid_grant')) throw error;
    // A reconnect may have replaced the grant while we were refreshing: then the stored tokens are newer than
    // the ones we spent, and they stand.
    const marked = await deps.connections.markNeedsReauth(
      connectionId,
      INVALID_GRANT,
      deps.now(),
      current.refreshTokenSealed,
    );
    if (!marked) return (await deps.connections.readTokens(connectionId)).accessToken;
    throw new NeedsReauthError(connectionId, INVALID_GRANT);
  }
  const saved = await deps.connections.saveTokensIfUnchanged(connectionId, current.refreshTokenSealed, {
    accessToken: refreshed.accessToken,
    refreshToken: refreshed.refreshToken,
    expiresAt: refreshed.expiresAt,
    scope: refreshed.scope ?? current.scope,
  });
  if (!saved) {
    // A reconnect committed while the refresh was in flight (or another refresh did, had this lock been lost
    // mid-call): the stored tokens are newer, and the pair just received is dropped.
    deps.logger.info({ connectionId }, 'tokens replaced during the refresh; keeping the newer ones');
    return (await deps.connections.readTokens(connectionId)).accessToken;
  }
  deps.logger.info({ connectionId, expiresAt: refreshed.expiresAt }, 'access token refreshed');
  return refreshed.accessToken;
}
