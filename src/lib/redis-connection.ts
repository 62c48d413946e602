// Redis connections. BullMQ workers block on Redis and must never give up on a command
// (maxRetriesPerRequest: null, as BullMQ requires); everything else fails fast so a request or a CLI command
// reports a Redis outage instead of hanging.
import { Redis } from 'ioredis';

export type RedisRole = 'blocking' | 'command';

export function createRedisConnection(url: string, role: RedisRole, connectionName = 'slotfeed'): Redis {
  return new Redis(url, {
    connectionName,
    // ioredis 6 speaks RESP3 by default; BullMQ 6's Lua scripts are written and tested against RESP2 replies.
    protocol: 2,
    maxRetriesPerRequest: role === 'blocking' ? null : 2,
  });
}
