// A per-key Redis lock for single-flight work across processes (one token refresh per connection).
// The owner token makes release safe: a holder whose lock expired (a long GC pause, a stalled event loop)
// cannot delete the lock that another process has taken since.
// The lock is renewed while its work runs, so work slower than the TTL (a slow upstream) keeps it; the TTL
// only bounds how long a crashed holder blocks the others. No lock can fence a third party that does not
// check it, though: a holder frozen for longer than the TTL loses the lock without running a line, so the
// work is told (an aborted signal) and whatever it writes last must still be checked where it is written.
import { randomBytes } from 'node:crypto';
import type { RedisClient } from './redis-connection.js';

const RELEASE_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

const RENEW_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

export class LockTimeoutError extends Error {
  constructor(key: string, waitedMs: number) {
    super(`could not take lock ${key} within ${waitedMs} ms`);
    this.name = 'LockTimeoutError';
  }
}

export class LockLostError extends Error {
  constructor(key: string) {
    super(`lost lock ${key}: it expired or another process holds it now`);
    this.name = 'LockLostError';
  }
}

export interface LockOptions {
  /** How long the lock lives if its holder stops renewing it (crash); renewed every third of this. */
  ttlMs: number;
  /** How long to wait for a lock held by someone else before giving up. */
  waitMs: number;
  sleep?: (ms: number) => Promise<void>;
}

export interface HeldLock {
  /** Aborted with a LockLostError once the lock may belong to someone else. */
  signal: AbortSignal;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Renews the lock every third of its TTL until stopped. A renewal that finds another owner, or no renewal
 * confirmed for a whole TTL (Redis unreachable), means the lock may be gone: `onLost` is called once.
 * Times are taken before each command is sent: the server started the TTL no earlier than that.
 */
function keepRenewed(
  redis: RedisClient,
  key: string,
  owner: string,
  ttlMs: number,
  takenAt: number,
  onLost: () => void,
): () => void {
  let confirmedAt = takenAt;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const renew = async () => {
    const sentAt = performance.now();
    try {
      const renewed = Number(await redis.eval(RENEW_IF_OWNER, 1, key, owner, ttlMs));
      if (stopped) return;
      if (renewed !== 1) return onLost();
      confirmedAt = sentAt;
    } catch {
      if (stopped) return;
      if (performance.now() - confirmedAt >= ttlMs) return onLost();
    }
    timer = setTimeout(() => void renew(), Math.max(1, Math.floor(ttlMs / 3)));
  };
  timer = setTimeout(() => void renew(), Math.max(1, Math.floor(ttlMs / 3)));
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Runs `work` while holding the lock on `key`; waits (bounded) for another holder to finish first. */
export async function withRedisLock<T>(
  redis: RedisClient,
  key: string,
  options: LockOptions,
  work: (lock: HeldLock) => Promise<T>,
): Promise<T> {
  const owner = randomBytes(16).toString('hex');
  const sleep = options.sleep ?? defaultSleep;
  const started = Date.now();
  let pause = 25;
  let takenAt = performance.now();
  while ((await redis.set(key, owner, 'PX', options.ttlMs, 'NX')) !== 'OK') {
    const waited = Date.now() - started;
    if (waited >= options.waitMs) throw new LockTimeoutError(key, waited);
    await sleep(Math.min(pause, options.waitMs - waited));
    pause = Math.min(pause * 2, 250);
    takenAt = performance.now();
  }
  const lost = new AbortController();
  const stopRenewing = keepRenewed(redis, key, owner, options.ttlMs, takenAt, () =>
    lost.abort(new LockLostError(key)),
  );
  try {
    return await work({ signal: lost.signal });
  } finally {
    stopRenewing();
    await redis.eval(RELEASE_IF_OWNER, 1, key, owner);
  }
}
