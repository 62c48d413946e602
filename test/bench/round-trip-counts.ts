// Round trips a measure makes to Postgres and Redis (issue 43), beside their CPU (store-cpu.ts): a count holds on a
// busy machine where CPU and rates do not, so a change that adds or saves a round trip a push shows in one run.
// Postgres: the statements the bench process sends (pg's Client.query, which Prisma's adapter and the pools use),
// the bench's own polls included. Redis: the commands the bench process sends (each a round trip, or part of a
// pipeline's), and the commands a private redis-server ran (INFO commandstats: a script's own commands each).
import pg from 'pg';
import { Redis } from 'ioredis';

/** Counts every statement this process sends through pg from now on, until stopped. */
export function countPostgresStatements(): { read(): number; stop(): void } {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  let statements = 0;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    statements++;
    return original.apply(this, args);
  };
  return {
    read: () => statements,
    stop: () => {
      prototype.query = original;
    },
  };
}

/** The two frames that asked for a command, outside ioredis, BullMQ's backend and Node. */
function callerOf(stack: string): string {
  return stack
    .split('\n')
    .slice(2)
    .filter((frame) => !/ioredis|node:|round-trip-counts|redis-queue-backend|<anonymous>/.test(frame))
    .slice(0, 2)
    .map((frame) =>
      frame
        .replace(/^\s+at /, '')
        .replace(/\S*node_modules\//, '')
        .replace(/\S*\/(src|test)\//, '$1/'),
    )
    .join(' < ');
}

/**
 * Counts every command this process sends to Redis from now on (ioredis's sendCommand, pipelined ones each), until
 * stopped: a script run is one command, whatever it runs inside. By name, or with `byCaller` by name and the code
 * that asked (a stack trace each: for finding where commands come from, not for a measure of CPU).
 */
export function countRedisCommands(byCaller = false): { read(): Map<string, number>; stop(): void } {
  const prototype = Redis.prototype as unknown as {
    sendCommand: (command: { name: string }, ...rest: unknown[]) => unknown;
  };
  const original = prototype.sendCommand;
  const counts = new Map<string, number>();
  prototype.sendCommand = function (this: unknown, command, ...rest) {
    const key = byCaller ? `${command.name} ${callerOf(new Error().stack ?? '')}` : command.name;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return original.call(this, command, ...rest);
  };
  return {
    read: () => new Map(counts),
    stop: () => {
      prototype.sendCommand = original;
    },
  };
}

/**
 * Commands the Redis server has run in all, from INFO commandstats: each command a script runs counts, so this is
 * the server's work, where countRedisCommands is the round trips.
 */
export async function redisCommandsRun(redis: Pick<Redis, 'info'>): Promise<number> {
  const stats = await redis.info('commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
}
