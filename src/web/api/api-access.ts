// Who is calling the JSON API, and what they may read. A bearer credential is either
// - an API key (`sfk_…`, made by an administrator): the connections and teams it is scoped to, all of their
//   availability; or
// - a feed's token: read-only, that feed's scope: its connection (or team), its event type when it names one,
//   and busy time only when the feed itself shows busy time.
// Anything outside the scope is answered as if it did not exist (404), so a credential cannot probe for ids.
import type { FastifyRequest } from 'fastify';
import { showsBusy, viewOf } from '../../feeds/feed-options.js';
import { API_KEY_PREFIX, type ApiKeyRecord, type ApiKeyStore } from '../../store/api-keys.js';
import type { FeedRecord, FeedStore } from '../../store/feeds.js';
import { hashFeedToken } from '../../feeds/feed-token.js';
import { HttpError } from '../http-error.js';

export type ApiAccess = { kind: 'key'; key: ApiKeyRecord } | { kind: 'feed'; feed: FeedRecord };

export const NOT_IN_SCOPE = 'No such connection or team, or this credential may not read it.';

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

export function mayReadConnection(access: ApiAccess, connectionId: string): boolean {
  return access.kind === 'key'
    ? access.key.connectionIds.includes(connectionId)
    : access.feed.connectionId === connectionId;
}

export function mayReadTeam(access: ApiAccess, teamId: string): boolean {
  return access.kind === 'key' ? access.key.teamIds.includes(teamId) : access.feed.teamId === teamId;
}

/** The one event type a feed token is limited to, or null for any. */
export function eventTypeScope(access: ApiAccess): string | null {
  return access.kind === 'feed' ? access.feed.upstreamEventId : null;
}

export function mayReadBusy(access: ApiAccess): boolean {
  return access.kind === 'key' || showsBusy(viewOf(access.feed.options));
}
