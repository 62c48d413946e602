// A Lua script run by its SHA1 (EVALSHA), through ioredis's defineCommand: ioredis sends the body only when a
// server answers NOSCRIPT (a restart, SCRIPT FLUSH, a new cluster node), instead of with every call as EVAL
// does. The rate limiter runs once per upstream call, so sending its few hundred bytes each time was a
// measurable share of a sync round's CPU.
import type { RedisClient } from './redis-connection.js';

type ScriptArg = string | number;
type DefinedCommand = (...args: ScriptArg[]) => Promise<unknown>;

export type RedisScript = (keys: readonly string[], args: readonly ScriptArg[]) => Promise<unknown>;

/**
 * Defines `lua` on `redis` under `name` (idempotent: a second definition with the same body is the same
 * command) and returns the function that runs it with `keys.length` keys.
 */
export function redisScript(
  redis: RedisClient,
  name: string,
  lua: string,
  numberOfKeys: number,
): RedisScript {
  const commands = redis as unknown as Record<string, DefinedCommand | undefined>;
  if (commands[name] === undefined) redis.defineCommand(name, { lua, numberOfKeys });
  const command = commands[name];
  if (command === undefined) throw new Error(`ioredis did not define the script command ${name}`);
  return (keys, args) => {
    if (keys.length !== numberOfKeys) {
      throw new Error(`script ${name} takes ${numberOfKeys} keys, was given ${keys.length}`);
    }
    return command.call(redis, ...keys, ...args);
  };
}
