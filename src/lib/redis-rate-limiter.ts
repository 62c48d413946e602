// One upstream rate limit shared by every worker process: a GCRA (generic cell rate algorithm) kept in Redis,
// so N workers together never exceed R calls per second, with at most `burst` calls at once. A 429 from the
// upstream pauses every caller until its Retry-After has passed, since the upstream limits our client id as a
// whole, not one process. A wait is slept in steps of at most SLEEP_STEP_MS, each ended early by the caller's
// abort (a shutdown): a pause of hours is then neither slept through by a shutdown nor handed to setTimeout
// whole (which shortens anything over 24.8 days to 1 ms, and would ask Redis again at once, over and over).
//
// A caller that has to wait for the rate reserves its turn: the script moves the limit on for it and answers when
// the call may go, and the caller sleeps until then and goes, asking Redis only whether a 429 paused the calls
// meanwhile. Before, a waiting caller was told when the next turn came and asked again then, with every other
// waiter told the same: one took the turn, the rest asked again, so at the limit each call cost a script run per
// caller waiting (14 a call in the sync-round bench at its 200 calls a second; docs/performance.md). A turn is
// reserved at most RESERVE_AHEAD_MS ahead, so that a shutdown leaves little of the rate unused behind it.
import type { RedisClient } from './redis-connection.js';
import { redisScript } from './redis-script.js';

// Answers {ms, reserved}. reserved 1: the call's turn is taken, and it may go in ms (0: now). reserved 0: nothing
// was taken; ask again in ms (the calls are paused, or the turn is further ahead than ARGV[5]); in 'report' mode
// a pause is answered as its ms negated. Time comes from Redis so that workers on machines with skewed clocks
// share one timeline. ARGV[4] says what a pause does: 'wait' and 'report' as above, 'ignore' leaves it aside
// (the rate alone decides). An audited grant records the instant its call may go (`at`, Redis ms).
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[4] ~= 'ignore' then
  local pausedUntil = tonumber(redis.call('GET', KEYS[2]) or '0')
  if pausedUntil > now then
    if ARGV[4] == 'report' then return {now - pausedUntil, 0} end
    return {pausedUntil - now, 0}
  end
end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = math.max(0, math.ceil(tat - tolerance - now))
local ahead = tonumber(ARGV[5])
if wait > ahead then return {wait - ahead, 0} end
local nextTat = tat + interval
redis.call('SET', KEYS[1], tostring(nextTat), 'PX', math.ceil(nextTat - now + 1000))
if ARGV[3] ~= '' then
  redis.call('XADD', ARGV[3], 'MAXLEN', '~', '100000', '*', 'g', '1', 'at', string.format('%.0f', now + wait))
end
return {wait, 1}`;

const PAUSE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untilMs = now + tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if untilMs > current then redis.call('SET', KEYS[1], tostring(untilMs), 'PX', tonumber(ARGV[1]) + 1000) end
return untilMs`;

const PAUSED_FOR = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return math.ceil(tonumber(redis.call('GET', KEYS[1]) or '0') - now)`;

export interface RateLimiterOptions {
  /** Calls per second across all processes; 0 disables the limit (pauses after a 429 still apply). */
  perSecond: number;
  burst: number;
  /**
   * Record every grant in a Redis stream (`<keyPrefix>:grants`, the last ~100,000; each entry's `at` is the Redis
   * time its call was scheduled to go), so an operator or a test can check the limit where it is decided.
   */
  audit?: boolean;
  /** Sleeps one step of a wait; ends early, rejecting with the signal's reason, once `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** This process's monotonic clock in ms, which says how late a caller woke for its turn. */
  monotonicMs?: () => number;
}

/** The longest single sleep of a wait: Redis is asked again after it, and a shutdown never waits longer. */
export const SLEEP_STEP_MS = 1000;

/**
 * How far ahead a caller may reserve its turn: one further back asks again once its turn would be this near.
 * A shutdown leaves the turns its waiting callers reserved unused, at most this much of the rate.
 */
export const RESERVE_AHEAD_MS = 10_000;

export interface RateLimiter {
  /** Resolves when this process may make one upstream call; a pause is waited out. */
  acquire(signal?: AbortSignal): Promise<void>;
  /**
   * Resolves with 0 when this process may make one call by the rate; while the calls are paused it takes nothing
   * and resolves at once with how long the pause still lasts. A caller that waited for its turn and finds the
   * calls paused when it comes is told the same (the turn is spent).
   */
  acquireUnlessPaused(signal?: AbortSignal): Promise<number>;
  /** Resolves when this process may make one call by the rate alone, paused or not. */
  acquireIgnoringPause(signal?: AbortSignal): Promise<void>;
  /** Stops every process's calls for `ms` (the upstream answered 429). */
  pauseAll(ms: number): Promise<void>;
  /** How long the calls are still paused for (0: not paused), by Redis's clock. */
  pausedForMs(): Promise<number>;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

type PauseMode = 'wait' | 'report' | 'ignore';

export function createRedisRateLimiter(
  redis: RedisClient,
  keyPrefix: string,
  options: RateLimiterOptions,
): RateLimiter {
  const sleep = options.sleep ?? defaultSleep;
  const monotonicMs = options.monotonicMs ?? (() => performance.now());
  const intervalMs = options.perSecond > 0 ? 1000 / options.perSecond : 0;
  const toleranceMs = intervalMs * Math.max(0, options.burst - 1);
  // A caller woken this much later than its turn (its process stalled, a loaded machine) gives the turn up and
  // asks for another: otherwise every turn reserved during a stall would go at once when it ends, past the burst.
  const lateByMoreThanMs = Math.max(toleranceMs, intervalMs);
  const tatKey = `${keyPrefix}:tat`;
  const pauseKey = `${keyPrefix}:paused-until`;
  const auditKey = options.audit ? `${keyPrefix}:grants` : '';
  const reserveScript = redisScript(redis, 'slotfeedRateLimitReserve', RESERVE, 2);
  const pauseScript = redisScript(redis, 'slotfeedRateLimitPause', PAUSE, 1);
  const pausedForScript = redisScript(redis, 'slotfeedRateLimitPausedFor', PAUSED_FOR, 1);

  /** Sleeps `ms` in steps of at most SLEEP_STEP_MS, each ended early by `signal`. */
  const sleepFor = async (ms: number, signal: AbortSignal | undefined) => {
    for (let left = ms; left > 0; left -= SLEEP_STEP_MS) await sleep(Math.min(left, SLEEP_STEP_MS), signal);
  };

  /** 0 once taken; a pause's ms left when `mode` is 'report' and the calls are paused (nothing taken then). */
  const take = async (mode: PauseMode, signal: AbortSignal | undefined): Promise<number> => {
    for (;;) {
      signal?.throwIfAborted();
      const [ms, reserved] = (await reserveScript(
        [tatKey, pauseKey],
        [intervalMs, toleranceMs, auditKey, mode, RESERVE_AHEAD_MS],
      )) as [number, number];
      if (reserved === 0) {
        if (ms < 0) return -ms;
        await sleep(Math.min(ms, SLEEP_STEP_MS), signal);
        continue;
      }
      if (ms === 0) return 0;
      const turnAt = monotonicMs() + ms;
      await sleepFor(ms, signal);
      if (monotonicMs() - turnAt > lateByMoreThanMs) continue;
      // Its turn came; a 429 since it was reserved holds the call back all the same (the turn is spent).
      if (mode === 'ignore') return 0;
      const pausedFor = Number(await pausedForScript([pauseKey], []));
      if (pausedFor <= 0) return 0;
      if (mode === 'report') return pausedFor;
      await sleep(Math.min(pausedFor, SLEEP_STEP_MS), signal);
    }
  };

  return {
    async acquire(signal) {
      await take('wait', signal);
    },
    acquireUnlessPaused: (signal) => take('report', signal),
    async acquireIgnoringPause(signal) {
      await take('ignore', signal);
    },
    async pauseAll(ms) {
      if (ms > 0) await pauseScript([pauseKey], [Math.ceil(ms)]);
    },
    async pausedForMs() {
      return Math.max(0, Number(await pausedForScript([pauseKey], [])));
    },
  };
}
