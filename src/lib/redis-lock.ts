// A per-key Redis lock for single-flight work across processes (one token refresh per connection).
// The owner token makes release safe: a holder whose lock expired (a long GC pause, a stalled event loop)
// cannot delete the lock that another process has taken since.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

const RELEASE_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export class LockTimeoutError extends Error {
  constructor(key: string, waitedMs: number) {
    super(`could not take lock ${key} within ${waitedMs} ms`);
    this.name = 'LockTimeoutError';
  }
}

export interface LockOptions {
  /** How long the lock lives if its holder never releases it (crash). Longer than the guarded work. */
  ttlMs: number;
  /** How long to wait for a lock held by someone else before giving up. */
  waitMs: number;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `work` while holding the lock on `key`; waits (bounded) for another holder to finish first. */
export async function withRedisLock<T>(
  redis: Redis,
  key: string,
  options: LockOptions,
  work: () => Promise<T>,
): Promise<T> {
  const owner = randomBytes(16).toString('hex');
  const sleep = options.sleep ?? defaultSleep;
  const started = Date.now();
  let pause = 25;
  while ((await redis.set(key, owner, 'PX', options.ttlMs, 'NX')) !== 'OK') {
    const waited = Date.now() - started;
    if (waited >= options.waitMs) throw new LockTimeoutError(key, waited);
    await sleep(Math.min(pause, options.waitMs - waited));
    pause = Math.min(pause * 2, 250);
  }
  try {
    return await work();
  } finally {
    await redis.eval(RELEASE_IF_OWNER, 1, key, owner);
  }
}
