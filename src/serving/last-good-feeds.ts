// What the feed route answers with when Postgres cannot answer: per token (by hash), the bytes this process
// last served for it and when the token was last known to be active. Kept apart from the token lookup and
// the render cache, which must forget on every change notice and on every lost listener (that is what made
// a Postgres outage turn every poll into a 500): this keeps the bytes and forgets only what is known gone.
//
// A token counts as confirmed when a database read found it active, and for as long afterwards as the change
// listener stays live with no notice about its owner (its connection, or its team): a revocation would have
// been heard. A notice may
// be a revocation, so it puts the token in doubt until a recheck (one indexed query, in the background)
// confirms it or finds it gone. When the listener stops, confirmation stops with it, and the grace period
// counts from there. Tokens found gone become tombstones so that, during an outage, a URL revoked before it
// still answers 404; only tokens this process served are kept, so guesses cannot fill memory.
import { LRUCache } from 'lru-cache';
import type { RenderedFeed } from './render-cache.js';
import type { FeedChangeListener, ResetCause } from '../store/feed-change-listener.js';
import { feedOwnerId, type ResolvedFeed } from '../store/feeds.js';

/** Bound of the bytes kept; entries are mostly the render cache's own objects, shared, not copies. */
export const DEFAULT_LAST_GOOD_BYTES = 64 * 1024 * 1024;
/** Connections whose latest notice is remembered individually (see noticedSince). */
const NOTICES_TRACKED = 10_000;
const TOMBSTONE_BYTES = 128;

export type OutageAnswer =
  { kind: 'last_good'; rendered: RenderedFeed } | { kind: 'gone' } | { kind: 'unavailable' };

interface KeptFeed {
  kind: 'kept';
  /** The connection or team the feed belongs to (feedOwnerId): notices about it may be a revocation. */
  ownerId: string;
  rendered: RenderedFeed;
  /** When the token was last known active. */
  confirmedAt: Date;
  /** Confirmed while the listener was live: it stays confirmed for as long as the listener stays live. */
  heard: boolean;
  /** A notice about its connection is not rechecked yet: it may have been a revocation. */
  doubted: boolean;
}

const GONE = { kind: 'gone' } as const;
type Entry = KeptFeed | typeof GONE;
const UNAVAILABLE: OutageAnswer = { kind: 'unavailable' };
const ANSWER_GONE: OutageAnswer = { kind: 'gone' };

export interface LastGoodFeeds {
  /** Taken when a request starts; `keep` refuses what a notice heard since then may have made wrong. */
  mark(): number;
  /** The database confirmed this token (read at or after `since`) and these bytes were served for it. */
  keep(since: number, tokenKey: string, ownerId: string, rendered: RenderedFeed): void;
  /** The database says the token is not active: a kept one answers 404 during an outage. */
  markGone(tokenKey: string): void;
  /** The answer for this token while Postgres cannot answer. */
  duringOutage(tokenKey: string): OutageAnswer;
  /** Whether some feed would be served from memory now, were Postgres gone (readiness asks this). */
  canServeAny(): boolean;
  /** Resolves once the rechecks of the notices heard so far are done. */
  settled(): Promise<void>;
  close(): void;
}

export interface LastGoodFeedsOptions {
  /** The token lookup's query: the active feed with this token hash, or undefined. */
  load: (tokenHash: Buffer) => Promise<ResolvedFeed | undefined>;
  changes: FeedChangeListener;
  /** How long after its last confirmation a token keeps being served from memory; 0 never. */
  graceSeconds: number;
  now: () => Date;
  maxBytes?: number;
  /** Told how each recheck after a notice ended (for metrics). */
  onRecheck?: (result: RecheckResult) => void;
}

export type RecheckResult = 'confirmed' | 'gone' | 'failed';

export function createLastGoodFeeds(options: LastGoodFeedsOptions): LastGoodFeeds {
  const { changes, now } = options;
  const onRecheck = options.onRecheck ?? (() => undefined);
  const graceMs = options.graceSeconds * 1000;
  const maxBytes = options.maxBytes ?? DEFAULT_LAST_GOOD_BYTES;
  const tokensOf = new Map<string, Set<string>>();
  const cache = new LRUCache<string, Entry>({
    maxSize: maxBytes,
    maxEntrySize: maxBytes,
    sizeCalculation: (entry) =>
      entry.kind === 'kept'
        ? entry.rendered.body.length + (entry.rendered.gzipped?.length ?? 0) + 256
        : TOMBSTONE_BYTES,
    dispose: (entry, key) => {
      if (entry.kind !== 'kept') return;
      const keys = tokensOf.get(entry.ownerId);
      keys?.delete(key);
      if (keys?.size === 0) tokensOf.delete(entry.ownerId);
    },
  });

  // Bumped by every notice and reset. `noticed` holds the generation of each owner's latest notice, so a
  // request refuses only what its own owner's change may have made wrong (a busy installation hears a
  // notice per sync; refusing on any notice at all would keep little). Past NOTICES_TRACKED connections the
  // map starts over from `floor`, which then counts as every owner's latest notice: safe, if coarse.
  let generation = 0;
  let floor = 0;
  const noticed = new Map<string, number>();
  const noticedSince = (ownerId: string, since: number) => (noticed.get(ownerId) ?? floor) > since;

  const queued = new Set<string>();
  let draining: Promise<void> = Promise.resolve();
  let isDraining = false;
  let closed = false;

  function index(key: string, ownerId: string) {
    const keys = tokensOf.get(ownerId) ?? new Set<string>();
    keys.add(key);
    tokensOf.set(ownerId, keys);
  }

  function servable(entry: KeptFeed, at: Date, listenerLive: boolean): boolean {
    if (entry.doubted) return false;
    const confirmedAt = entry.heard && listenerLive ? at : entry.confirmedAt;
    return at.getTime() - confirmedAt.getTime() < graceMs;
  }

  function kept(key: string): KeptFeed | undefined {
    const entry = cache.peek(key);
    return entry?.kind === 'kept' ? entry : undefined;
  }

  async function recheck(ownerId: string): Promise<void> {
    for (const key of [...(tokensOf.get(ownerId) ?? [])]) {
      if (closed) return;
      const since = generation;
      let resolved: ResolvedFeed | undefined;
      try {
        resolved = await options.load(Buffer.from(key, 'base64'));
      } catch {
        // It stays in doubt: during an outage it answers 503, which is all that can be said of it.
        onRecheck('failed');
        continue;
      }
      const entry = kept(key);
      // Another notice since the read queued another recheck, which will decide.
      if (entry === undefined || !entry.doubted || noticedSince(ownerId, since)) continue;
      if (resolved === undefined) {
        cache.set(key, GONE);
        onRecheck('gone');
      } else if (feedOwnerId(resolved.feed) !== entry.ownerId) {
        // Moved to another owner (only SQL does that): forgotten, the next poll keeps it afresh.
        cache.delete(key);
      } else {
        entry.doubted = false;
        entry.confirmedAt = now();
        entry.heard = changes.isLive();
        onRecheck('confirmed');
      }
    }
  }

  async function drain(): Promise<void> {
    isDraining = true;
    try {
      // One connection at a time: a sync round notices hundreds of connections at once, and these queries
      // must not crowd out the feed requests that share the connection pool.
      while (queued.size > 0 && !closed) {
        const ownerId = queued.values().next().value as string;
        queued.delete(ownerId);
        await recheck(ownerId);
      }
    } finally {
      isDraining = false;
    }
  }

  changes.subscribe({
    changed(ownerId) {
      generation += 1;
      if (noticed.size >= NOTICES_TRACKED) {
        noticed.clear();
        floor = generation;
      }
      noticed.set(ownerId, generation);
      const keys = tokensOf.get(ownerId);
      if (keys === undefined) return;
      for (const key of keys) {
        const entry = kept(key);
        if (entry) entry.doubted = true;
      }
      queued.add(ownerId);
      if (!isDraining) draining = drain();
    },
    reset(cause: ResetCause) {
      generation += 1;
      floor = generation;
      noticed.clear();
      if (cause === 'every-feed-changed') {
        // A TRUNCATE: every token is in doubt. Too many to recheck at once; the next poll of each decides.
        for (const entry of cache.values()) if (entry.kind === 'kept') entry.doubted = true;
        return;
      }
      // The listener stopped hearing (or starts again after not hearing): what it confirmed, it confirmed
      // until now, and no further.
      const at = now();
      for (const entry of cache.values()) {
        if (entry.kind === 'kept' && entry.heard) {
          entry.heard = false;
          entry.confirmedAt = at;
        }
      }
    },
  });

  return {
    mark: () => generation,

    keep(since, tokenKey, ownerId, rendered) {
      if (noticedSince(ownerId, since)) return;
      const at = now();
      const heard = changes.isLive();
      const entry = cache.get(tokenKey);
      // The hot path (an unchanged feed polled again): no new entry, no size calculation.
      if (entry?.kind === 'kept' && entry.ownerId === ownerId && entry.rendered === rendered) {
        entry.confirmedAt = at;
        entry.heard = heard;
        entry.doubted = false;
        return;
      }
      const fresh: KeptFeed = {
        kind: 'kept',
        ownerId,
        rendered,
        confirmedAt: at,
        heard,
        doubted: false,
      };
      cache.set(tokenKey, fresh);
      // A feed larger than the whole bound is refused by the cache and must not be indexed.
      if (cache.peek(tokenKey) === fresh) index(tokenKey, ownerId);
    },

    markGone(tokenKey) {
      if (kept(tokenKey)) cache.set(tokenKey, GONE);
    },

    duringOutage(tokenKey) {
      const entry = cache.get(tokenKey);
      if (entry === undefined) return UNAVAILABLE;
      if (entry.kind === 'gone') return ANSWER_GONE;
      return servable(entry, now(), changes.isLive())
        ? { kind: 'last_good', rendered: entry.rendered }
        : UNAVAILABLE;
    },

    canServeAny() {
      if (graceMs <= 0) return false;
      const at = now();
      const live = changes.isLive();
      // Most recently polled first (values() does not touch recency), so the answer is usually the first entry.
      for (const entry of cache.values()) if (entry.kind === 'kept' && servable(entry, at, live)) return true;
      return false;
    },

    settled: () => draining,

    close() {
      closed = true;
      queued.clear();
    },
  };
}
