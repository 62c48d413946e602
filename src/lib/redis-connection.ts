// Redis connections. BullMQ workers block on Redis and must never give up on a command
// (maxRetriesPerRequest: null, as BullMQ requires); everything else fails fast so a request or a CLI command
// reports a Redis outage instead of hanging: a command waits for a lost connection through two reconnect
// attempts at most, and for an answer at most COMMAND_TIMEOUT_MS.
// Every connection has an error listener: without one, ioredis writes "[ioredis] Unhandled error event" and a
// stack to stderr on every reconnect attempt, outside the JSON log.
import { Redis } from 'ioredis';
import type { RepeatedErrorLog } from './repeated-errors.js';

export type RedisRole = 'blocking' | 'command';

/** Longest a command of a 'command' connection waits for its answer, queued while reconnecting included. */
export const COMMAND_TIMEOUT_MS = 5000;

export function createRedisConnection(
  url: string,
  role: RedisRole,
  connectionName = 'slotfeed',
  /** Where connection errors go, once per interval. Absent only for short-lived clients (tests, scripts):
   *  their errors then reach them only as rejected commands. */
  errors?: RepeatedErrorLog,
): Redis {
  const client = new Redis(url, {
    connectionName,
    // ioredis 6 speaks RESP3 by default; BullMQ 6's Lua scripts are written and tested against RESP2 replies.
    protocol: 2,
    maxRetriesPerRequest: role === 'blocking' ? null : 2,
    ...(role === 'command' ? { commandTimeout: COMMAND_TIMEOUT_MS } : {}),
  });
  const source = `Redis connection ${connectionName}`;
  client.on('error', errors ? (error: unknown) => errors.report(source, error) : () => undefined);
  if (errors) client.on('ready', () => errors.recovered(source));
  return client;
}
