// Who is calling the JSON API: an API key (`sfk_…`, made by an administrator) or a feed's token, as a bearer
// credential. What each may read is api-scope.ts's business.
import type { FastifyRequest } from 'fastify';
import { API_KEY_PREFIX, type ApiKeyRecord, type ApiKeyStore } from '../../store/api-keys.js';
import type { FeedRecord, FeedStore } from '../../store/feeds.js';
import { hashFeedToken } from '../../feeds/feed-token.js';
import { HttpError } from '../http-error.js';

export type ApiAccess = { kind: 'key'; key: ApiKeyRecord } | { kind: 'feed'; feed: FeedRecord };

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function unauthorized(detail: string): HttpError {
  return new HttpError(401, detail, { headers: { 'www-authenticate': 'Bearer realm="slotfeed API"' } });
}

/** The credential's secret, for rate limits: counted per credential, hashed (never kept in clear). */
export function credentialKeyOf(request: FastifyRequest): string | undefined {
  const secret = BEARER.exec(request.headers.authorization ?? '')?.[1];
  return secret === undefined ? undefined : hashFeedToken(secret).toString('base64url');
}

export function createApiAccess(deps: { apiKeys: ApiKeyStore; feeds: FeedStore; now: () => Date }) {
  return {
    async of(request: FastifyRequest): Promise<ApiAccess> {
      const secret = BEARER.exec(request.headers.authorization ?? '')?.[1];
      if (secret === undefined) {
        throw unauthorized('Send an API key or a feed token: Authorization: Bearer <credential>.');
      }
      if (secret.startsWith(API_KEY_PREFIX)) {
        const key = await deps.apiKeys.findBySecret(secret);
        if (key === undefined) throw unauthorized('This API key is not valid (revoked, or never issued).');
        await deps.apiKeys.touch(key, deps.now());
        return { kind: 'key', key };
      }
      const feed = await deps.feeds.findByToken(secret);
      if (feed === undefined)
        throw unauthorized('This credential is not valid (a revoked or unknown feed token).');
      return { kind: 'feed', feed };
    },
  };
}

export type ApiAccessResolver = ReturnType<typeof createApiAccess>;
