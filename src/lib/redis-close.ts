// Closing a Redis connection without waiting for ever. quit() sends QUIT and waits for the replies, which a
// node that is gone (a killed master, a Cluster client stuck reconnecting after a failover) never sends: a
// process shutting down then waits as long as the outage lasts. So a graceful QUIT gets a bound, and past it
// (or when it fails) the connection is dropped with disconnect(), as ioredis advises for a close that must end.
import type { RedisClient } from './redis-connection.js';

/** How long a graceful QUIT may take before the connection is dropped. */
export const QUIT_GRACE_MS = 2000;

/** Resolves true when `promise` settles within `ms`, false when the time runs out first; never rejects. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const outOfTime = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = promise.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([settled, outOfTime]);
  } finally {
    clearTimeout(timer);
  }
}

/** QUITs `client`, or drops it when the QUIT fails or has no answer within `graceMs`. */
export async function closeRedisClient(client: RedisClient, graceMs = QUIT_GRACE_MS): Promise<void> {
  const quit = client.quit().then(
    () => true,
    () => false,
  );
  const quitInTime = (await settlesWithin(quit, graceMs)) && (await quit);
  if (!quitInTime) client.disconnect();
}
