// One upstream rate limit shared by every worker process: a GCRA (generic cell rate algorithm) kept in Redis,
// so N workers together never exceed R calls per second, with at most `burst` calls at once. A 429 from the
// upstream pauses every caller until its Retry-After has passed, since the upstream limits our client id as a
// whole, not one process. A wait is slept in steps of at most SLEEP_STEP_MS, each ended early by the caller's
// abort (a shutdown): a pause of hours is then neither slept through by a shutdown nor handed to setTimeout
// whole (which shortens anything over 24.8 days to 1 ms, and would ask Redis again at once, over and over).
import type { RedisClient } from './redis-connection.js';
import { redisScript } from './redis-script.js';

// Returns 0 when the call may go now, else how many ms to wait. Time comes from Redis so that workers on
// machines with skewed clocks share one timeline. ARGV[4] says what a pause does: 'wait' answers it as a wait,
// 'report' as its ms negated (nothing taken), 'ignore' leaves it aside (the rate alone decides).
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[4] ~= 'ignore' then
  local pausedUntil = tonumber(redis.call('GET', KEYS[2]) or '0')
  if pausedUntil > now then
    if ARGV[4] == 'report' then return now - pausedUntil end
    return pausedUntil - now
  end
end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
if tat - tolerance > now then return math.ceil(tat - tolerance - now) end
local nextTat = tat + interval
redis.call('SET', KEYS[1], tostring(nextTat), 'PX', math.ceil(nextTat - now + 1000))
if ARGV[3] ~= '' then redis.call('XADD', ARGV[3], 'MAXLEN', '~', '100000', '*', 'g', '1') end
return 0`;

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
   * Record every grant in a Redis stream (`<keyPrefix>:grants`, the last ~100,000; each entry's id is the
   * grant's Redis time), so an operator or a test can check the limit where it is decided.
   */
  audit?: boolean;
  /** Sleeps one step of a wait; ends early, rejecting with the signal's reason, once `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The longest single sleep of a wait: Redis is asked again after it, and a shutdown never waits longer. */
export const SLEEP_STEP_MS = 1000;

export interface RateLimiter {
  /** Resolves when this process may make one upstream call; a pause is waited out. */
  acquire(signal?: AbortSignal): Promise<void>;
  /**
   * Resolves with 0 when this process may make one call by the rate; while the calls are paused it takes nothing
   * and resolves at once with how long the pause still lasts.
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
  const intervalMs = options.perSecond > 0 ? 1000 / options.perSecond : 0;
  const toleranceMs = intervalMs * Math.max(0, options.burst - 1);
  const tatKey = `${keyPrefix}:tat`;
  const pauseKey = `${keyPrefix}:paused-until`;
  const auditKey = options.audit ? `${keyPrefix}:grants` : '';
  const acquireScript = redisScript(redis, 'slotfeedRateLimitAcquire', ACQUIRE, 2);
  const pauseScript = redisScript(redis, 'slotfeedRateLimitPause', PAUSE, 1);
  const pausedForScript = redisScript(redis, 'slotfeedRateLimitPausedFor', PAUSED_FOR, 1);

  /** 0 once taken; a pause's ms left when `mode` is 'report' and the calls are paused (nothing taken). */
  const take = async (mode: PauseMode, signal: AbortSignal | undefined): Promise<number> => {
    for (;;) {
      signal?.throwIfAborted();
      const answer = Number(
        await acquireScript([tatKey, pauseKey], [intervalMs, toleranceMs, auditKey, mode]),
      );
      if (answer === 0) return 0;
      if (answer < 0) return -answer;
      await sleep(Math.min(answer, SLEEP_STEP_MS), signal);
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
