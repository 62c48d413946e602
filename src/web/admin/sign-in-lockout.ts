// Wrong admin tokens, counted per client address: the sign-in form and a bearer header on any admin route
// both count, since either is a way to guess. After MAX_FAILURES wrong tokens the address is locked out for
// LOCKOUT_MS, and every attempt while locked (right or wrong: answering a right one would let guessing go on
// behind the lockout) restarts that time, so a guesser who keeps trying never gets another guess, and one who
// stops gets five more a quarter of an hour later. With a 32-character random ADMIN_TOKEN guessing was
// already hopeless; what this stops is the load and the log lines of thousands of guesses a second.
//
// An attempt reserves its place before the token is compared, in one step (a script in Redis), and a right
// token gives the place back. Counting after the comparison would let a burst of concurrent guesses all pass
// the check before any was counted. Counts live in Redis, so every web process sees the same ones, and in this
// process's memory while Redis cannot answer (as rate-limit-store.ts does for the request limits).
import type { FastifyRequest } from 'fastify';
import type { RedisClient } from '../../lib/redis-connection.js';
import { LRUCache } from 'lru-cache';
import { clientAddressOf } from '../rate-limits.js';

export const MAX_FAILURES = 5;
export const LOCKOUT_MS = 15 * 60 * 1000;
// How long a connected Redis may take to answer before memory counts instead. Not shorter: a loaded machine
// delays a healthy Redis's answer (a flood of 400 concurrent guesses at a load of 13 on 2 cores met answers
// later than 250 ms), and memory then counts apart from Redis, which let seven guesses be checked, not five.
const REDIS_TIMEOUT_MS = 2_000;

export type Attempt =
  | {
      allowed: true;
      /** The token was right: the reserved place is given back. */
      succeeded(): Promise<void>;
      /** The token was wrong: how many the address has sent, and how long it is now locked out (0: not). */
      failed(): Promise<{ failures: number; lockedForSeconds: number }>;
    }
  | { allowed: false; retryAfterSeconds: number };

export interface SignInLockout {
  /** Reserves one token check for the request's address, unless it is locked out. */
  attempt(request: FastifyRequest): Promise<Attempt>;
}

// KEYS[1] the address's counter. ARGV: operation, max, window ms.
// reserve -> {1, count} reserved, or {0, ms} locked (and the lock restarted);
// refund  -> {1, count}; failed -> {count, ms locked or 0}.
const SCRIPT = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local max = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
if ARGV[1] == 'reserve' then
  if n >= max then
    redis.call('PEXPIRE', KEYS[1], window)
    return {0, window}
  end
  n = redis.call('INCR', KEYS[1])
  if n == 1 then redis.call('PEXPIRE', KEYS[1], window) end
  return {1, n}
elseif ARGV[1] == 'refund' then
  if n > 0 then n = redis.call('DECR', KEYS[1]) end
  return {1, n}
else
  if n >= max then
    redis.call('PEXPIRE', KEYS[1], window)
    return {n, window}
  end
  return {n, 0}
end
`;

type Operation = 'reserve' | 'refund' | 'failed';

/** The same counting, in memory: used while Redis cannot answer. */
function memoryCounts() {
  const counts = new LRUCache<string, number>({ max: 10_000, ttl: LOCKOUT_MS, updateAgeOnGet: false });
  return (key: string, op: Operation): [number, number] => {
    const n = counts.get(key) ?? 0;
    const keep = (value: number, restart: boolean) =>
      counts.set(
        key,
        value,
        restart ? { ttl: LOCKOUT_MS } : { ttl: counts.getRemainingTTL(key) || LOCKOUT_MS },
      );
    if (op === 'reserve') {
      if (n >= MAX_FAILURES) {
        keep(n, true);
        return [0, LOCKOUT_MS];
      }
      keep(n + 1, n === 0);
      return [1, n + 1];
    }
    if (op === 'refund') {
      if (n > 0) keep(n - 1, false);
      return [1, Math.max(0, n - 1)];
    }
    if (n >= MAX_FAILURES) {
      keep(n, true);
      return [n, LOCKOUT_MS];
    }
    return [n, 0];
  };
}

export function createSignInLockout(options: { redis: RedisClient; redisPrefix: string }): SignInLockout {
  const { redis } = options;
  const inMemory = memoryCounts();

  async function run(key: string, op: Operation): Promise<[number, number]> {
    if (redis.status !== 'ready') return inMemory(key, op);
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = redis.eval(SCRIPT, 1, key, op, MAX_FAILURES, LOCKOUT_MS) as Promise<[number, number]>;
      // Should the answer come after memory has been used, or fail then, it is dropped.
      answer.catch(() => undefined);
      const late = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), REDIS_TIMEOUT_MS);
      });
      return (await Promise.race([answer, late])) ?? inMemory(key, op);
    } catch {
      return inMemory(key, op);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async attempt(request) {
      const key = `${options.redisPrefix}:admin-sign-in:${clientAddressOf(request)}`;
      const [reserved, value] = await run(key, 'reserve');
      if (reserved === 0) return { allowed: false, retryAfterSeconds: Math.ceil(value / 1000) };
      return {
        allowed: true,
        succeeded: async () => void (await run(key, 'refund')),
        failed: async () => {
          const [failures, lockedMs] = await run(key, 'failed');
          return { failures, lockedForSeconds: Math.ceil(lockedMs / 1000) };
        },
      };
    },
  };
}
