// Types for the two stores @fastify/rate-limit ships (CommonJS, untyped), which rate-limit-store.ts uses to keep
// counts in Redis and, while Redis cannot answer, in memory. Both take the same calls as the plugin makes.
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { RedisClient } from '../lib/redis-connection.js';

  type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

  export default class RedisStore {
    constructor(
      continueExceeding: boolean,
      exponentialBackoff: boolean,
      redis: RedisClient,
      keyPrefix: string,
    );
    incr(key: string, callback: Callback, timeWindow: number, max: number): void;
    read(key: string, callback: Callback, timeWindow: number, max: number): void;
  }
}

declare module '@fastify/rate-limit/store/LocalStore.js' {
  type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

  export default class LocalStore {
    constructor(continueExceeding: boolean, exponentialBackoff: boolean, cacheSize?: number);
    incr(key: string, callback: Callback, timeWindow: number, max: number): void;
    read(key: string, callback: Callback, timeWindow: number, max: number): void;
  }
}
