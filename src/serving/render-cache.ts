// Rendered feeds, kept in memory so a poll of an unchanged feed is no render (and, with the token lookup
// remembered, no query). The key holds everything a render depends on (feed-representation.ts builds it);
// the bound is total bytes, since one feed can be a thousand times larger than another.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import { formatHttpDate } from '../lib/http-date.js';

export interface RenderedFeed {
  /** The iCalendar text as UTF-8. */
  body: Buffer;
  /** gzip of body, made once at render time when compression is enabled. */
  gzipped: Buffer | undefined;
  /** Opaque part of the strong ETag of the identity body (hash of its bytes). */
  tag: string;
  lastModified: Date;
  /** lastModified as an HTTP date, formatted once. */
  lastModifiedHttpDate: string;
}

export const DEFAULT_RENDER_CACHE_BYTES = 64 * 1024 * 1024;

/** What is made of a feed, kept by the key of everything it depends on (feed-representation.ts builds it). */
export interface KeyedCache<T> {
  get(key: string): T | undefined;
  set(key: string, made: T): void;
}

export type RenderCache = KeyedCache<RenderedFeed>;

export function createRenderCache(maxBytes = DEFAULT_RENDER_CACHE_BYTES): RenderCache {
  const cache = new LRUCache<string, RenderedFeed>({
    maxSize: maxBytes,
    // A feed larger than the whole cache is simply not kept (lru-cache refuses it rather than evicting all).
    maxEntrySize: maxBytes,
    sizeCalculation: (feed) => feed.body.length + (feed.gzipped?.length ?? 0) + 256,
  });
  return {
    get: (key) => cache.get(key),
    set: (key, feed) => {
      cache.set(key, feed);
    },
  };
}

/**
 * What is cached under `key` (a representation, or whatever else is made of a feed), or else what `make` reads and
 * makes, cached under the key of what it actually read: a sync may have committed since `key` was computed from
 * the remembered state.
 */
export async function cachedOrMade<T>(
  cache: KeyedCache<T>,
  key: string,
  make: () => Promise<{ key: string; made: T }>,
  onLookup?: (result: 'hit' | 'miss') => void,
): Promise<T> {
  const cached = cache.get(key);
  onLookup?.(cached === undefined ? 'miss' : 'hit');
  if (cached !== undefined) return cached;
  const fresh = await make();
  cache.set(fresh.key, fresh.made);
  return fresh.made;
}

/** Text as a representation: its bytes, gzip of them when asked, a strong tag of them, its validators. */
export function representationOf(text: string, lastModified: Date, options: { gzip: boolean }): RenderedFeed {
  const body = Buffer.from(text, 'utf8');
  return {
    body,
    // Node writes a zero mtime into the gzip header, so the compressed bytes are as stable as the text.
    gzipped: options.gzip ? gzipSync(body) : undefined,
    tag: createHash('sha256').update(body).digest('base64url').slice(0, 32),
    lastModified,
    lastModifiedHttpDate: formatHttpDate(lastModified),
  };
}
