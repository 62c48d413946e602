// One upstream rate limit shared by every worker process: a GCRA (generic cell rate algorithm) kept in Redis,
// so N workers together never exceed R calls per second, with at most `burst` calls at once. A 429 from the
// upstream pauses every caller until its Retry-After has passed, since the upstream limits our client id as a
// whole, not one process.
//
// A grant is a reservation (issue 42): Redis moves the limit's timeline on and answers when the call may go, and
// the caller sleeps until then without asking again. Asking again after each wait, as this limiter first did,
// made one script call per wait step for every queued caller; with calls queued at the rate that was several
// script calls per upstream call, all on the one hash tag every worker shares. The callers of one process that
// are waiting at once are reserved for together, in one script call. A reservation whose caller is aborted
// (a shutdown) is not given back: the others wait one interval longer, no call goes out beyond the rate.
// Waits are slept in steps of at most SLEEP_STEP_MS, each ended early by the caller's abort: a pause of hours
// is then neither slept through by a shutdown nor handed to setTimeout whole (which shortens anything over 24.8
// days to 1 ms). A pause is asked about once a step; a reserved wait of a step or more asks once more at its
// end, so a pause another process set meanwhile (a 429) still stops the call.
import type { RedisClient } from './redis-connection.js';
import { redisScript } from './redis-script.js';

// Reserves ARGV[5] consecutive grants. Returns { pauseMs, wait1, wait2, … }: pauseMs > 0 when the calls are
// paused (nothing reserved), else the ms each grant must wait from now. Time comes from Redis so that workers on
// machines with skewed clocks share one timeline. ARGV[4] says what a pause does: 'wait' and 'report' answer it
// (nothing reserved), 'ignore' leaves it aside (the rate alone decides). The audit stream's entry ids are the
// grants' times: what the limit decided, wherever the callers then run.
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[4] ~= 'ignore' then
  local pausedUntil = tonumber(redis.call('GET', KEYS[2]) or '0')
  if pausedUntil > now then return { pausedUntil - now } end
end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local count = tonumber(ARGV[5])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local answer = { 0 }
for k = 0, count - 1 do
  local at = tat + k * interval - tolerance
  if at < now then at = now end
  answer[k + 2] = math.ceil(at - now)
  if ARGV[3] ~= '' then
    local added = redis.pcall('XADD', ARGV[3], 'MAXLEN', '~', '100000', math.floor(at) .. '-*', 'g', '1')
    if type(added) == 'table' and added.err then redis.call('XADD', ARGV[3], 'MAXLEN', '~', '100000', '*', 'g', '1') end
  end
end
local nextTat = tat + count * interval
redis.call('SET', KEYS[1], tostring(nextTat), 'PX', math.ceil(nextTat - now + 1000))
return answer`;

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

/** The most grants one script call reserves: a batch's last caller waits at most this many intervals for it. */
export const MOST_GRANTS_PER_CALL = 32;

interface Waiter {
  mode: PauseMode;
  signal: AbortSignal | undefined;
  /** 0 once granted; a pause's ms left for 'report' (nothing taken). */
  resolve(pausedForMs: number): void;
  reject(reason: unknown): void;
}

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
  const reserveScript = redisScript(redis, 'slotfeedRateLimitReserve', RESERVE, 2);
  const pauseScript = redisScript(redis, 'slotfeedRateLimitPause', PAUSE, 1);
  const pausedForScript = redisScript(redis, 'slotfeedRateLimitPausedFor', PAUSED_FOR, 1);
  const pausedForMs = async () => Math.max(0, Number(await pausedForScript([pauseKey], [])));

  /** Sleeps `ms` in steps of at most SLEEP_STEP_MS, each ended by the signal's abort. */
  const sleepInSteps = async (ms: number, signal: AbortSignal | undefined) => {
    for (let left = ms; left > 0; left -= SLEEP_STEP_MS) {
      signal?.throwIfAborted();
      await sleep(Math.min(left, SLEEP_STEP_MS), signal);
    }
  };

  /** One waiter's answer: its reserved wait slept, or the pause handled as its mode says. */
  const settle = async (waiter: Waiter, pauseMs: number, waitMs: number): Promise<void> => {
    if (pauseMs > 0) {
      if (waiter.mode === 'report') return waiter.resolve(pauseMs);
      await sleep(Math.min(pauseMs, SLEEP_STEP_MS), waiter.signal);
      return enqueue(waiter);
    }
    await sleepInSteps(waitMs, waiter.signal);
    if (waitMs >= SLEEP_STEP_MS && waiter.mode !== 'ignore') {
      const paused = await pausedForMs();
      if (paused > 0) return settle(waiter, paused, 0);
    }
    waiter.resolve(0);
  };

  // The waiters of this process not yet reserved for, and whether a reservation is on its way to Redis: those
  // that come meanwhile go together in the next one.
  const queue: Waiter[] = [];
  let reserving = false;

  // `reserving` is cleared in the same turn as the last look at the queue, so a waiter enqueued after it starts
  // a reservation of its own rather than waiting on one that is over.
  /** The next waiters to reserve for: the first one's mode, at most MOST_GRANTS_PER_CALL; the aborted dropped. */
  const nextBatch = (): Waiter[] => {
    const mode = queue[0]!.mode;
    const batch: Waiter[] = [];
    for (let i = 0; i < queue.length && batch.length < MOST_GRANTS_PER_CALL;) {
      const waiter = queue[i]!;
      if (waiter.signal?.aborted) {
        queue.splice(i, 1);
        waiter.reject(waiter.signal.reason);
      } else if (waiter.mode === mode) batch.push(...queue.splice(i, 1));
      else i++;
    }
    return batch;
  };

  // `reserving` is cleared in the same turn as the last look at the queue, so a waiter enqueued after that look
  // starts a reservation of its own instead of waiting for one that is over.
  const reserveForQueue = async (): Promise<void> => {
    try {
      while (queue.length > 0) {
        const batch = nextBatch();
        if (batch.length === 0) continue;
        let answer: number[];
        try {
          const reply = (await reserveScript(
            [tatKey, pauseKey],
            [intervalMs, toleranceMs, auditKey, batch[0]!.mode, batch.length],
          )) as (number | string)[];
          answer = reply.map(Number);
        } catch (error: unknown) {
          for (const waiter of batch) waiter.reject(error);
          continue;
        }
        const [pauseMs = 0, ...waits] = answer;
        batch.forEach((waiter, i) => {
          settle(waiter, pauseMs, waits[i] ?? 0).catch((reason: unknown) => waiter.reject(reason));
        });
      }
    } finally {
      reserving = false;
    }
  };

  function enqueue(waiter: Waiter): void {
    queue.push(waiter);
    if (reserving) return;
    reserving = true;
    void reserveForQueue();
  }

  const take = (mode: PauseMode, signal: AbortSignal | undefined): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      enqueue({ mode, signal, resolve, reject });
    });

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
    pausedForMs,
  };
}
