// Fair to every CalDAV server (issue 35): how many requests slotfeed has under way at one host, and how fast it
// sends them, across every worker process (Redis). A push takes one slot at its host for each lane it writes
// with (redis-semaphore, one sorted set per host: slots time out if a worker dies, renewed while held), at least
// one or none: a host
// whose slots are all taken, or that asked slotfeed to come back later (a 429 or 503 with Retry-After), gets no
// push at all for a while, and the worker's slot goes to another host's push meanwhile (caldav-queue.ts delays
// the job). Each request is paced by the host's own rate limit (the project's Redis GCRA, lib/redis-rate-limiter.ts),
// which also holds the Retry-After pause.
//
// A hold lasts no longer than a destination's own retry is put off (RETRY_AFTER_MAX_MS, 6 h), whatever the
// server asked: one server's Retry-After of a year would otherwise stop every calendar on it for that year. No
// worker sleeps a hold: a push or cleanup that meets one before a request (another's 503 came in meanwhile) is
// refused at once (CalDavHeldBackError) and its job waits in the delayed set, not in a worker's slot. A person's
// own action on a page (adding a calendar, new credentials, resuming) is tried now, paced by the rate alone: it
// is one person's few requests, and they are waiting for the answer.
import { Semaphore, type LockOptions } from 'redis-semaphore';
import { CalDavHeldBackError } from '../caldav/errors.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { createRedisRateLimiter, type RateLimiter } from '../lib/redis-rate-limiter.js';
import { RETRY_AFTER_MAX_MS } from './push-policy.js';

export interface HostLimitSettings {
  /** Requests under way at one host, across every worker. */
  concurrency: number;
  /** Requests a second to one host, across every worker; 0: no rate limit. */
  perSecond: number;
  /** How long a slot outlives a worker that died holding it. */
  slotTimeoutMs: number;
  keyPrefix: string;
}

/** One slot at a host, renewed in Redis while held. */
export interface HostSlot {
  release(): Promise<void>;
}

/** The slots a push holds at its host. */
export interface HostSlots {
  /** How many lanes the push may write with (1 to the lanes asked for): one slot each. */
  lanes: number;
  /** Each slot on its own, so that a worker can hand one to another push (host-gate.ts). */
  held: readonly HostSlot[];
  release(): Promise<void>;
}

/** Slots held together: released together. */
export const slotsHeldTogether = (held: readonly HostSlot[]): HostSlots => ({
  lanes: held.length,
  held,
  release: async () => {
    await Promise.all(held.map((slot) => slot.release()));
  },
});

export interface HostWait {
  retryInMs: number;
  reason: 'busy' | 'held back';
}

export interface HostLimits {
  /** Up to `lanes` slots at `host`, or how long to wait before asking again. */
  enter(host: string, lanes: number): Promise<HostSlots | HostWait>;
  /** Before each request of a worker to the host: its rate limit; CalDavHeldBackError while it is held back. */
  pace(host: string, signal?: AbortSignal): Promise<void>;
  /** Before each request of a person's own action (a page's): its rate limit alone, held back or not. */
  paceOwnAction(host: string, signal?: AbortSignal): Promise<void>;
  /** The host answered 429 or 503 with Retry-After: no worker's request to it for `ms`, at most HOST_HOLD_MAX_MS. */
  holdBack(host: string, ms: number): Promise<void>;
}

/** How soon a push that found its host busy asks again: a slot frees when one of its requests is answered. */
export const HOST_BUSY_RETRY_MS = 250;

/** The longest a host is held back: as long as a destination's own retry after a Retry-After is put off. */
export const HOST_HOLD_MAX_MS = RETRY_AFTER_MAX_MS;

export const isHostWait = <T extends object>(entered: T | HostWait): entered is HostWait =>
  'retryInMs' in entered;

export function createHostLimits(redis: RedisClient, settings: HostLimitSettings): HostLimits {
  const limiters = new Map<string, RateLimiter>();
  const limiterOf = (host: string) => {
    let limiter = limiters.get(host);
    if (!limiter) {
      limiter = createRedisRateLimiter(redis, `${settings.keyPrefix}:rate:${host}`, {
        perSecond: settings.perSecond,
        burst: settings.concurrency,
      });
      limiters.set(host, limiter);
    }
    return limiter;
  };
  const slotKey = (host: string) => `${settings.keyPrefix}:slots:${host}`;
  /** A slot taken, renewed until it is let go (it may change hands in between: host-gate.ts). */
  const heldSlot = (host: string, slot: Semaphore, slotOptions: LockOptions): HostSlot => {
    // The documented way to renew a slot one holds: the same identifier, acquired externally.
    const renewal = setInterval(
      () =>
        void new Semaphore(redis, slotKey(host), settings.concurrency, {
          ...slotOptions,
          identifier: slot.identifier,
          acquiredExternally: true,
        })
          .tryAcquire()
          .catch(() => false),
      Math.max(1, Math.floor(settings.slotTimeoutMs / 3)),
    );
    renewal.unref();
    return {
      release: async () => {
        clearInterval(renewal);
        await slot.release().catch(() => undefined);
      },
    };
  };

  return {
    async enter(host, lanes) {
      const pausedForMs = await limiterOf(host).pausedForMs();
      if (pausedForMs > 0) return { retryInMs: Math.min(pausedForMs, HOST_HOLD_MAX_MS), reason: 'held back' };
      const slotOptions = {
        lockTimeout: settings.slotTimeoutMs,
        // Renewed below, not by the library's own timer: its renewal's failure (Redis gone) would be an
        // unhandled rejection, and a lost slot only lets one more request through, nothing to stop a push for.
        refreshInterval: 0,
        acquireAttemptsLimit: 1,
      };
      const taken: Semaphore[] = [];
      try {
        for (let lane = 0; lane < lanes; lane++) {
          const slot = new Semaphore(redis, slotKey(host), settings.concurrency, slotOptions);
          if (!(await slot.tryAcquire())) break;
          taken.push(slot);
        }
      } catch (error: unknown) {
        // Redis failed on a later slot: the ones taken go back now, not when their timeout runs out.
        await Promise.all(taken.map((slot) => slot.release().catch(() => undefined)));
        throw error;
      }
      if (taken.length === 0) return { retryInMs: HOST_BUSY_RETRY_MS, reason: 'busy' };
      return slotsHeldTogether(taken.map((slot) => heldSlot(host, slot, slotOptions)));
    },
    async pace(host, signal) {
      const heldForMs = await limiterOf(host).acquireUnlessPaused(signal);
      // Capped here too: a hold stored before holds were capped (a year) delays a job no longer than a new one.
      if (heldForMs > 0) throw new CalDavHeldBackError(host, Math.min(heldForMs, HOST_HOLD_MAX_MS));
    },
    paceOwnAction: (host, signal) => limiterOf(host).acquireIgnoringPause(signal),
    holdBack: (host, ms) => limiterOf(host).pauseAll(Math.min(ms, HOST_HOLD_MAX_MS)),
  };
}
