// Redis connections, to one server or to a Redis Cluster (REDIS_CLUSTER_NODES). BullMQ workers block on Redis
// and must never give up on a command (maxRetriesPerRequest: null, as BullMQ requires); everything else fails
// fast so a request or a CLI command reports a Redis outage instead of hanging: a command waits for a lost
// connection through two reconnect attempts at most, and for an answer at most COMMAND_TIMEOUT_MS.
// Every connection has an error listener: without one, ioredis writes "[ioredis] Unhandled error event" and a
// stack to stderr on every reconnect attempt, outside the JSON log.
// On a cluster every key of an installation carries the same hash tag (REDIS_PREFIX, checked by config.ts), so
// the multi-key scripts of BullMQ and slotfeed find their keys on one node.
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RepeatedErrorLog } from './repeated-errors.js';

export type RedisRole = 'blocking' | 'command';

/** A connection to one Redis server or to a Redis Cluster: the same commands either way. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: REDIS_URL, and the cluster's nodes when it is one. */
export interface RedisTarget {
  url: string;
  clusterNodes?: readonly { host: string; port: number }[];
}

/** The target the `redis` configuration section names. */
export const redisTargetOf = (redis: {
  url: string;
  clusterNodes: RedisTarget['clusterNodes'];
}): RedisTarget => ({
  url: redis.url,
  ...(redis.clusterNodes && redis.clusterNodes.length > 0 ? { clusterNodes: redis.clusterNodes } : {}),
});

/** Longest a command of a 'command' connection waits for its answer, queued while reconnecting included. */
export const COMMAND_TIMEOUT_MS = 5000;

/** Credentials and TLS from the URL, for each node of a cluster (the URL's host is not used then). */
function nodeOptionsFrom(url: string): RedisOptions {
  const parsed = new URL(url);
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

export function createRedisConnection(
  target: string | RedisTarget,
  role: RedisRole,
  connectionName = 'slotfeed',
  /** Where connection errors go, once per interval. Absent only for short-lived clients (tests, scripts):
   *  their errors then reach them only as rejected commands. */
  errors?: RepeatedErrorLog,
): RedisClient {
  const { url, clusterNodes = [] } = typeof target === 'string' ? { url: target } : target;
  const options: RedisOptions = {
    connectionName,
    // ioredis 6 speaks RESP3 by default; BullMQ 6's Lua scripts are written and tested against RESP2 replies.
    protocol: 2,
    maxRetriesPerRequest: role === 'blocking' ? null : 2,
    ...(role === 'command' ? { commandTimeout: COMMAND_TIMEOUT_MS } : {}),
  };
  const client: RedisClient =
    clusterNodes.length > 0
      ? new Cluster([...clusterNodes], {
          redisOptions: { ...options, ...nodeOptionsFrom(url) },
          // BullMQ reads it from the cluster's own options too.
          maxRetriesPerRequest: options.maxRetriesPerRequest,
        } as ConstructorParameters<typeof Cluster>[1])
      : new Redis(url, options);
  const source = `Redis connection ${connectionName}`;
  client.on('error', errors ? (error: unknown) => errors.report(source, error) : () => undefined);
  if (errors) client.on('ready', () => errors.recovered(source));
  return client;
}
