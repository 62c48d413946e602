// Per-client-address limits (@fastify/rate-limit, counts in Redis with a fallback to memory, see
// rate-limit-store.ts). The numbers, and why:
// - /connect and /oauth/callback, CONNECT_RATE_LIMIT_PER_MINUTE each (20): a person connects once and may
//   retry a few times; an office behind one address connecting its staff on the morning of a roll-out gets
//   twenty a minute. A flood got 118,921 OAuth states into Redis in 20 s; now it gets 20 a minute (and
//   oauth-state.ts keeps at most 50 unfinished sign-ins per address at any time).
// - POST /admin/login, 10 a minute: a ceiling on the form itself; wrong tokens are also locked out after five
//   (sign-in-lockout.ts), which is what stops guessing.
// - Feeds, FEED_RATE_LIMIT_PER_MINUTE (600, 10 a second on average, in any burst within the minute): Google
//   and Microsoft fetch every subscriber's calendars from a handful of shared addresses, and a company's
//   devices share one NAT address: 500 people subscribed to 5 feeds each, polling every 15 minutes, make
//   ~170 requests a minute from one address. A scraper or a token guesser makes thousands a second.
//   Counted in each web process's memory, not Redis: a poll of an unchanged feed is answered from memory with
//   no store round trip, and one per poll would cost more than the answer. With N web processes an address
//   gets up to N × 600 a minute, which still stops a scraper.
// The address is request.ip: the socket's peer, or what TRUST_PROXY lets X-Forwarded-For say. IPv6 clients are
// counted per /64, the block one subscriber gets, so hopping within it gains nothing.
import rateLimit, { normalizeIP, type RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { RedisClient } from '../lib/redis-connection.js';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../log.js';
import { HttpError } from './http-error.js';
import { fallbackRateLimitStore } from './rate-limit-store.js';

const MINUTE_MS = 60_000;
export const SIGN_IN_FORM_PER_MINUTE = 10;

/** The address limits count by: IPv4 as is, IPv6 by its /64, IPv4-mapped IPv6 as IPv4. */
export function clientAddressOf(request: FastifyRequest): string {
  return normalizeIP(request.ip, 64);
}

function retryPhrase(seconds: number): string {
  return seconds >= 120 ? `${Math.ceil(seconds / 60)} minutes` : `${seconds} seconds`;
}

/**
 * A limit of `max` requests per address per window. A refused request is a 429 with Retry-After, logged at
 * debug (the access log does that for 429s); that an address went over is logged once per window, at warn.
 */
export function perAddressLimit(
  name: string,
  max: number,
  options: { windowMs?: number; keyed?: boolean } = {},
): RateLimitOptions | false {
  if (max <= 0) return false;
  const windowMs = options.windowMs ?? MINUTE_MS;
  const warned = new LRUCache<string, true>({ max: 10_000, ttl: windowMs });
  return {
    max,
    timeWindow: windowMs,
    // Hook limits share one store namespace (route limits get one per route), so their keys carry the name.
    ...(options.keyed
      ? { keyGenerator: (request: FastifyRequest) => `${name}:${clientAddressOf(request)}` }
      : {}),
    onExceeded: (request, key) => {
      if (warned.has(key)) return;
      warned.set(key, true);
      request.log.warn(
        { limit: name, max, windowSeconds: windowMs / 1000, client: key },
        'rate limit exceeded',
      );
    },
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return new HttpError(
        429,
        `Too many requests from your address: try again in ${retryPhrase(seconds)}.`,
        {
          headers: { 'retry-after': String(seconds) },
        },
      );
    },
  };
}

/** Registers the plugin (no limit anywhere until a route or hook asks for one). Before any route. */
export async function registerRateLimits(
  app: FastifyInstance,
  deps: { redis: RedisClient; redisPrefix: string; logger: Logger },
): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    store: fallbackRateLimitStore({
      redis: deps.redis,
      namespace: `${deps.redisPrefix}:rate-limit:`,
      onModeChange: (mode, error) =>
        mode === 'memory'
          ? deps.logger.warn({ err: error }, 'Redis unavailable: rate limits counted in memory, per process')
          : deps.logger.info('Redis answers again: rate limits counted in Redis'),
    }),
    // Counting is never skipped: a store error falls back to memory inside the store.
    skipOnError: false,
  });
}

/** The onRequest hook that limits feed requests, or undefined when FEED_RATE_LIMIT_PER_MINUTE is 0. */
export function feedRateLimitHook(
  app: FastifyInstance,
  perMinute: number,
): onRequestAsyncHookHandler | undefined {
  const limit = perAddressLimit('feeds', perMinute, { keyed: true });
  if (limit === false) return undefined;
  // Options the plugin merges like its own but does not type: count in memory (rate-limit-store.ts), and
  // add no X-RateLimit-* headers to feeds that are served (a refusal still carries Retry-After).
  const feedOnly = {
    inMemoryOnly: true,
    addHeadersOnExceeding: {
      'x-ratelimit-limit': false,
      'x-ratelimit-remaining': false,
      'x-ratelimit-reset': false,
    },
  };
  return app.rateLimit({ ...limit, ...feedOnly }) as onRequestAsyncHookHandler;
}
