// `slotfeed sync` needs Redis only to add jobs and read their state. A connection to a Redis that does not answer
// keeps retrying in the background, so the command asks once, with a deadline, and stops with a message that
// names REDIS_URL instead of hanging or printing the client's retry noise.

/** Where REDIS_URL points, without its user and password. */
function redisLocation(redisUrl: string): string {
  try {
    const url = new URL(redisUrl);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return 'REDIS_URL';
  }
}

export class RedisUnreachableError extends Error {
  constructor(redisUrl: string) {
    super(
      `Redis at ${redisLocation(redisUrl)} does not answer (REDIS_URL). Check REDIS_URL and that Redis is ` +
        'running there: `docker compose up -d redis`, or `apt-get install redis-server`.',
    );
    this.name = 'RedisUnreachableError';
  }
}

const ANSWER_TIMEOUT_MS = 5000;

/** Resolves once Redis answers PING; RedisUnreachableError when it fails or takes longer than the timeout. */
export async function requireRedisAnswers(
  redis: { ping(): Promise<string> },
  redisUrl: string,
  timeoutMs = ANSWER_TIMEOUT_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisUnreachableError(redisUrl)), timeoutMs);
  });
  try {
    await Promise.race([redis.ping(), deadline]);
  } catch (thrown: unknown) {
    throw thrown instanceof RedisUnreachableError ? thrown : new RedisUnreachableError(redisUrl);
  } finally {
    clearTimeout(timer);
  }
}
