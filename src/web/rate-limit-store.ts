// Where @fastify/rate-limit keeps its counts: in Redis (its own RedisStore, one atomic script per request), so
// every web process counts against the same limit; and while Redis cannot answer, in this process's memory
// (its LocalStore), so an outage of Redis neither lifts the limits nor fails the requests they guard. Redis
// is asked only while its connection is ready, and not waited on for more than a moment: a limiter that hangs
// would hang every request behind it. A limit given `inMemoryOnly` always counts in memory (see feeds in
// rate-limits.ts).
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import RedisStore from '@fastify/rate-limit/store/RedisStore.js';
import type { RedisClient } from '../lib/redis-connection.js';

type Result = { current: number; ttl: number };
type Callback = (error: Error | null, result?: Result) => void;

/** What the plugin passes to a store's constructor and child(): its merged options. */
interface StoreParams {
  continueExceeding?: boolean;
  exponentialBackoff?: boolean;
  routeInfo?: { method?: string | string[]; url?: string };
  /** Ours, passed through the plugin's options: count this limit in this process's memory only. */
  inMemoryOnly?: boolean;
}

export interface FallbackStoreOptions {
  redis: RedisClient;
  /** Key prefix in Redis, e.g. "slotfeed:rate-limit:". */
  namespace: string;
  /** How long one Redis answer may take before memory is used instead. */
  redisTimeoutMs?: number;
  /** Told when counting moves to memory (Redis failed) and back (Redis answered again). */
  onModeChange?: (mode: 'memory' | 'redis', error?: Error) => void;
  /** Most client keys remembered in memory per limit (least recently seen are forgotten). */
  memoryKeys?: number;
}

// A moment, on a loaded machine: at a load of 13 on 2 cores a healthy Redis's answers to a flood of 500
// requests came later than 250 ms, memory counted some of them apart from Redis, and 21 got through a limit of 20.
const DEFAULT_REDIS_TIMEOUT_MS = 1_000;

/** A store class for @fastify/rate-limit's `store` option. */
export function fallbackRateLimitStore(options: FallbackStoreOptions) {
  const timeoutMs = options.redisTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
  // Shared by every limit's store, so a Redis outage is reported once, not once per route.
  let mode: 'memory' | 'redis' = 'redis';
  const setMode = (next: 'memory' | 'redis', error?: Error) => {
    if (mode === next) return;
    mode = next;
    options.onModeChange?.(next, error);
  };

  return class FallbackRateLimitStore {
    private readonly redisStore: RedisStore;
    private readonly localStore: LocalStore;
    private readonly inMemoryOnly: boolean;

    constructor(
      pluginParams: object,
      private readonly keyPrefix = options.namespace,
    ) {
      const params = pluginParams as StoreParams;
      this.inMemoryOnly = params.inMemoryOnly === true;
      const continueExceeding = params.continueExceeding ?? false;
      const exponentialBackoff = params.exponentialBackoff ?? false;
      this.redisStore = new RedisStore(continueExceeding, exponentialBackoff, options.redis, keyPrefix);
      this.localStore = new LocalStore(continueExceeding, exponentialBackoff, options.memoryKeys ?? 10_000);
    }

    incr(key: string, callback: Callback, timeWindow: number, max: number): void {
      this.count('incr', key, callback, timeWindow, max);
    }

    read(key: string, callback: Callback, timeWindow: number, max: number): void {
      this.count('read', key, callback, timeWindow, max);
    }

    /** Route limits count apart from each other (as RedisStore's own child does); hook limits by their key. */
    child(routeParams: object): FallbackRateLimitStore {
      const route = (routeParams as StoreParams).routeInfo;
      const suffix = route?.url === undefined ? '' : `${[route.method].flat().join(',')}${route.url}-`;
      return new FallbackRateLimitStore(routeParams, `${this.keyPrefix}${suffix}`);
    }

    private count(
      method: 'incr' | 'read',
      key: string,
      callback: Callback,
      timeWindow: number,
      max: number,
    ): void {
      const inMemory = () => this.localStore[method](key, callback, timeWindow, max);
      if (this.inMemoryOnly) {
        inMemory();
        return;
      }
      if (options.redis.status !== 'ready') {
        setMode('memory', new Error(`Redis connection is ${options.redis.status}`));
        inMemory();
        return;
      }
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        setMode('memory', new Error(`Redis did not answer within ${timeoutMs} ms`));
        inMemory();
      }, timeoutMs);
      this.redisStore[method](
        key,
        (error, result) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (error !== null || result === undefined) {
            setMode('memory', error ?? undefined);
            inMemory();
            return;
          }
          setMode('redis');
          callback(null, result);
        },
        timeWindow,
        max,
      );
    }
  };
}
