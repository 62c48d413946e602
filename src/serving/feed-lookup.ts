// Resolves a feed token to its feed and the connection state its bytes depend on, remembering the answer so a
// poll of an unchanged feed costs no database round trip. What is remembered is forgotten when Postgres says
// anything it depends on changed (feed-change-listener.ts): the connection or one of its feeds, or for a team
// feed the team and each of its members; nothing is remembered while the
// listener is not live. Unknown tokens are never remembered: guesses must not fill memory.
import { LRUCache } from 'lru-cache';
import { hashFeedToken } from '../feeds/feed-token.js';
import type { FeedChangeListener } from '../store/feed-change-listener.js';
import { feedDependencies, type ResolvedFeed } from '../store/feeds.js';

const DEFAULT_MAX_ENTRIES = 50_000;

export type LookupResult = 'remembered' | 'loaded' | 'unknown';

/** A token as the lookup keys it: hashed once per request, whatever the token looks like. */
export interface HashedToken {
  hash: Buffer;
  /** base64 of the hash: the key of everything remembered per token. */
  key: string;
}

export function hashedToken(token: string): HashedToken {
  const hash = hashFeedToken(token);
  return { hash, key: hash.toString('base64') };
}

export interface FeedLookup {
  /** The active feed for a token, or undefined. Hashes the token whatever it looks like. */
  resolve(token: string): Promise<ResolvedFeed | undefined>;
  /** The same for a token the caller hashed already (it needs the key too). */
  resolveHashed(token: HashedToken): Promise<ResolvedFeed | undefined>;
}

export function createFeedLookup(options: {
  load: (tokenHash: Buffer) => Promise<ResolvedFeed | undefined>;
  changes: FeedChangeListener;
  maxEntries?: number;
  /** Told how each lookup was answered (for metrics). */
  onLookup?: (result: LookupResult) => void;
}): FeedLookup {
  const onLookup = options.onLookup ?? (() => undefined);
  // Tokens remembered per id a notice may name (feedDependencies).
  const tokensOf = new Map<string, Set<string>>();
  const cache = new LRUCache<string, ResolvedFeed>({
    max: options.maxEntries ?? DEFAULT_MAX_ENTRIES,
    dispose: (resolved, key) => {
      for (const id of feedDependencies(resolved)) {
        const keys = tokensOf.get(id);
        keys?.delete(key);
        if (keys?.size === 0) tokensOf.delete(id);
      }
    },
  });
  // Bumped by every change heard: a load that started before a change must not store what it read, since the
  // change's notice may have arrived (and found nothing to forget) while the load was still in flight.
  let generation = 0;

  options.changes.subscribe({
    changed: (id) => {
      generation += 1;
      for (const key of [...(tokensOf.get(id) ?? [])]) cache.delete(key);
    },
    reset: () => {
      generation += 1;
      cache.clear();
    },
  });

  async function resolveHashed({ hash: tokenHash, key }: HashedToken): Promise<ResolvedFeed | undefined> {
    const remembered = cache.get(key);
    if (remembered) {
      onLookup('remembered');
      return remembered;
    }
    const startedAt = generation;
    const resolved = await options.load(tokenHash);
    onLookup(resolved ? 'loaded' : 'unknown');
    if (resolved && generation === startedAt && options.changes.isLive()) {
      cache.set(key, resolved);
      for (const id of feedDependencies(resolved)) {
        const keys = tokensOf.get(id) ?? new Set<string>();
        keys.add(key);
        tokensOf.set(id, keys);
      }
    }
    return resolved;
  }

  return {
    resolve: (token) => resolveHashed(hashedToken(token)),
    resolveHashed,
  };
}
