// Rendered feeds, kept in memory so a poll of an unchanged feed is no render (and, with the token lookup
// remembered, no query). The key holds everything a render depends on (feed-representation.ts builds it);
// the bound is total bytes, since one feed can be a thousand times larger than another.
import { LRUCache } from 'lru-cache';

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

export interface RenderCache {
  get(key: string): RenderedFeed | undefined;
  set(key: string, feed: RenderedFeed): void;
}

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
