// Which Redis the demo uses: REDIS_URL when it is set; otherwise 127.0.0.1:6379 when it answers (the demo keeps
// its keys under a prefix of its own); otherwise a redis-server from PATH on a free loopback port, with no
// persistence; otherwise it stops with a message that says how to get one.
import { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { redactText } from '../log.js';
import { findExecutable, startRedisServer, type RunningRedisServer } from './redis-server-process.js';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export interface LocalRedis {
  url: string;
  source: 'env' | 'default' | 'started';
  /** The redis-server started for this run, if any. */
  server: RunningRedisServer | null;
  /** Stops that server, if any; safe to call twice. */
  stop(): Promise<void>;
}

export class RedisUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisUnavailableError';
  }
}

export interface LocalRedisInput {
  env: Record<string, string | undefined>;
  /** Tried when REDIS_URL is unset. Default redis://127.0.0.1:6379. */
  defaultUrl?: string;
  /** Where to look for redis-server. Default: env.PATH. */
  pathEnv?: string;
  logger: Logger;
}

/** Whether a Redis at `url` answers PING within the timeout; never retries, never throws. */
export async function redisAnswers(url: string, timeoutMs = 2000): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    protocol: 2,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export function noRedisMessage(defaultUrl: string): string {
  return [
    `No Redis: REDIS_URL is not set, nothing answers at ${defaultUrl}, and there is no redis-server on PATH.`,
    'Get one, then run the demo again:',
    '  with Docker:      docker compose up -d redis',
    '  Debian / Ubuntu:  sudo apt-get install redis-server    (macOS: brew install redis)',
    '  or set REDIS_URL to a Redis of your own, e.g. REDIS_URL=redis://127.0.0.1:6379',
  ].join('\n');
}

export async function resolveLocalRedis(input: LocalRedisInput): Promise<LocalRedis> {
  const none = async () => undefined;
  const fromEnv = input.env.REDIS_URL;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!(await redisAnswers(fromEnv))) {
      throw new RedisUnavailableError(`The Redis of REDIS_URL (${redactText(fromEnv)}) does not answer.`);
    }
    return { url: fromEnv, source: 'env', server: null, stop: none };
  }
  const defaultUrl = input.defaultUrl ?? DEFAULT_REDIS_URL;
  if (await redisAnswers(defaultUrl)) return { url: defaultUrl, source: 'default', server: null, stop: none };

  const executable = findExecutable('redis-server', input.pathEnv ?? input.env.PATH);
  if (executable === null) throw new RedisUnavailableError(noRedisMessage(defaultUrl));
  const server = await startRedisServer({ executable });
  input.logger.info({ port: server.port, pid: server.pid, executable }, 'started redis-server');
  return { url: server.url, source: 'started', server, stop: () => server.stop() };
}
