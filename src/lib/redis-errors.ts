// Which failures mean "Redis cannot do this right now" rather than "this request is wrong": no connection,
// a command given up on (retries spent, timed out), or Redis refusing writes (full under `noeviction`, a
// failed disk write, a read-only replica after a failover). The web role answers these 503 with Retry-After,
// fast: a request that needs Redis (the connect flow, admin sessions and actions, the queue dashboard) is
// refused at once while the connection is down instead of waiting for it (90 s and more, before).
import type { RedisClient } from './redis-connection.js';

export type RedisUnavailableReason = 'not_connected' | 'timeout' | 'refused_writes' | 'connection_lost';

/** How long a web request waits for one Redis operation before it answers 503. */
export const REDIS_REQUEST_TIMEOUT_MS = 1500;

export class RedisUnavailableError extends Error {
  readonly code = 'redis_unavailable';

  constructor(
    readonly reason: RedisUnavailableReason,
    options?: { cause?: unknown },
  ) {
    super(`Redis is unavailable (${reason})`, options);
    this.name = 'RedisUnavailableError';
  }
}

// Error replies that last until an operator acts: OOM (maxmemory reached with noeviction), MISCONF (RDB
// snapshots failing), READONLY (connected to a replica).
const REFUSED_WRITES = /(^|[\s-])(OOM|MISCONF|READONLY)\s/;

/**
 * Why Redis could not do it, or undefined when the error is of another kind. Only errors that can come from
 * nowhere but ioredis count: a bare ECONNREFUSED might be any socket's.
 */
export function redisUnavailableReason(thrown: unknown): RedisUnavailableReason | undefined {
  if (thrown instanceof RedisUnavailableError) return thrown.reason;
  if (!(thrown instanceof Error)) return undefined;
  if (thrown.name === 'MaxRetriesPerRequestError') return 'connection_lost';
  if (thrown.message === 'Command timed out') return 'timeout';
  if (thrown.message === 'Connection is closed.') return 'connection_lost';
  if (thrown.message.startsWith("Stream isn't writeable")) return 'not_connected';
  if (thrown.name === 'ReplyError' && REFUSED_WRITES.test(thrown.message)) return 'refused_writes';
  return undefined;
}

/**
 * Redis answered with an error reply (OOM, MISCONF, READONLY, BUSY, …) rather than losing the connection:
 * retrying at once gets the same answer. BullMQ wraps some of them in an Error of its own, message kept.
 */
export function isRedisErrorReply(thrown: unknown): boolean {
  if (!(thrown instanceof Error)) return false;
  return thrown.name === 'ReplyError' || REFUSED_WRITES.test(thrown.message);
}

/**
 * Runs `operation` only while `redis` is connected, and gives up after `timeoutMs`: answers
 * RedisUnavailableError at once when the connection is down, and turns Redis's own refusals into one.
 * A command given up on may still run later, once Redis answers; callers use this only where that is harmless
 * (a deduplicated enqueue, a session check).
 */
export async function whileRedisAnswers<T>(
  redis: RedisClient,
  operation: () => Promise<T>,
  timeoutMs: number = REDIS_REQUEST_TIMEOUT_MS,
): Promise<T> {
  if (redis.status !== 'ready') throw new RedisUnavailableError('not_connected');
  let timer: NodeJS.Timeout | undefined;
  const running = operation();
  // A late failure, after the timeout has answered, must not become an unhandled rejection.
  running.catch(() => undefined);
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new RedisUnavailableError('timeout')), timeoutMs);
  });
  try {
    return await Promise.race([running, late]);
  } catch (thrown: unknown) {
    const reason = redisUnavailableReason(thrown);
    if (reason === undefined || thrown instanceof RedisUnavailableError) throw thrown;
    throw new RedisUnavailableError(reason, { cause: thrown });
  } finally {
    clearTimeout(timer);
  }
}
