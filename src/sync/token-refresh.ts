// Fresh access tokens, refreshed ahead of expiry with single flight across processes. With refresh-token
// rotation a refresh token can be spent once: two workers refreshing the same connection at the same moment
// would make one of them fail with invalid_grant, and the auth server may then revoke the whole grant. So a
// refresh happens under a per-connection Redis lock, re-reads the stored tokens once it holds the lock (the
// previous holder may have refreshed already), and persists the new pair before anyone uses it.
import type { Redis } from 'ioredis';
import { withRedisLock } from '../lib/redis-lock.js';
import type { Logger } from '../log.js';
import type { ConnectionStore, StoredTokens } from '../store/connections.js';
import { UpstreamAuthError, type OAuthClient } from '../upstream/index.js';

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
  redis: Redis;
  keyPrefix: string;
  /** Refresh when the access token expires within this margin. */
  marginMs: number;
  now: () => Date;
  logger: Logger;
  lock?: { ttlMs: number; waitMs: number };
}

export interface RefreshRequest {
  /** The API refused this access token (401): refresh even though it has not expired, unless it was replaced. */
  rejectedAccessToken?: string;
}

const DEFAULT_LOCK = { ttlMs: 30_000, waitMs: 25_000 };

function isUsable(tokens: StoredTokens, deps: TokenRefreshDeps, request: RefreshRequest): boolean {
  if (request.rejectedAccessToken !== undefined && tokens.accessToken === request.rejectedAccessToken)
    return false;
  return tokens.expiresAt.getTime() - deps.now().getTime() > deps.marginMs;
}

/** Returns an access token that is valid for at least the margin, refreshing it if needed. */
export async function refreshIfExpiring(
  deps: TokenRefreshDeps,
  connectionId: string,
  request: RefreshRequest = {},
): Promise<string> {
  const before = await deps.connections.readTokens(connectionId);
  if (isUsable(before, deps, request)) return before.accessToken;

  const lockKey = `${deps.keyPrefix}:lock:token-refresh:${connectionId}`;
  return withRedisLock(deps.redis, lockKey, deps.lock ?? DEFAULT_LOCK, async () => {
    const current = await deps.connections.readTokens(connectionId);
    if (isUsable(current, deps, request)) return current.accessToken;

    let refreshed;
    try {
      refreshed = await deps.oauth.refresh(current.refreshToken);
    } catch (error: unknown) {
      if (error instanceof UpstreamAuthError && error.reason === 'invalid_grant') {
        // Someone outside this lock (an older process version, a manual reconnect) may have replaced the
        // grant while we were refreshing: then the stored tokens are newer than the ones we spent.
        const after = await deps.connections.readTokens(connectionId);
        if (after.refreshTokenSealed !== current.refreshTokenSealed) return after.accessToken;
        await deps.connections.markNeedsReauth(
          connectionId,
          'the refresh token was refused (invalid_grant)',
          deps.now(),
        );
        throw new NeedsReauthError(connectionId, 'the refresh token was refused (invalid_grant)');
      }
      throw error;
    }
    await deps.connections.saveTokens(connectionId, {
      accessToken: refreshed.accessToken,
      refreshToken: refreshed.refreshToken,
      expiresAt: refreshed.expiresAt,
      scope: refreshed.scope ?? current.scope,
    });
    deps.logger.info({ connectionId, expiresAt: refreshed.expiresAt }, 'access token refreshed');
    return refreshed.accessToken;
  });
}
