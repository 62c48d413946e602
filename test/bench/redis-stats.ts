// What a benchmark reads from a redis-server of its own (INFO): commands by name, bytes in and out, the server's
// CPU time and its memory. Only meaningful on a private server: every figure is the whole server's.
import type { RedisClient } from '../../src/lib/redis-connection.js';
import { round } from './process-stats.js';

export interface RedisCounters {
  /** Calls by command name (lower case), since the server started. */
  calls: Record<string, number>;
  /** Microseconds spent executing each command (INFO commandstats usec). */
  usec: Record<string, number>;
  netInputBytes: number;
  netOutputBytes: number;
  /** The server's own CPU time (used_cpu_user + used_cpu_sys of the main process), ms. */
  cpuMs: number;
  usedMemoryBytes: number;
}

function fieldsOf(info: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of info.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

export async function readRedisCounters(redis: RedisClient): Promise<RedisCounters> {
  const info = fieldsOf(await redis.info('all'));
  const calls: Record<string, number> = {};
  const usec: Record<string, number> = {};
  for (const [key, value] of info) {
    if (!key.startsWith('cmdstat_')) continue;
    const name = key.slice('cmdstat_'.length);
    calls[name] = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
    usec[name] = Number(/usec=(\d+)/.exec(value)?.[1] ?? 0);
  }
  const number = (field: string) => Number(info.get(field) ?? NaN);
  return {
    calls,
    usec,
    netInputBytes: number('total_net_input_bytes'),
    netOutputBytes: number('total_net_output_bytes'),
    cpuMs: (number('used_cpu_user') + number('used_cpu_sys')) * 1000,
    usedMemoryBytes: number('used_memory'),
  };
}

export interface RedisUse {
  commands: number;
  byCommand: Record<string, number>;
  commandUsec: number;
  netInputBytes: number;
  netOutputBytes: number;
  cpuMs: number;
  seconds: number;
}

/**
 * What the server did between two readings, less what it does idle over as long (`idle`, a rate per second
 * measured with the same processes connected and nothing to do: BullMQ's blocking waits, the dispatchers' polls).
 * The readings' own INFO commands are left out.
 */
export function redisUseBetween(
  before: RedisCounters,
  after: RedisCounters,
  seconds: number,
  idle?: RedisUse,
): RedisUse {
  const idleShare = idle ? seconds / idle.seconds : 0;
  const byCommand: Record<string, number> = {};
  for (const [name, n] of Object.entries(after.calls)) {
    if (name === 'info') continue;
    const made = n - (before.calls[name] ?? 0) - (idle?.byCommand[name] ?? 0) * idleShare;
    if (made > 0) byCommand[name] = made;
  }
  const usec = Object.entries(after.usec)
    .filter(([name]) => name !== 'info')
    .reduce((sum, [name, n]) => sum + n - (before.usec[name] ?? 0), 0);
  return {
    commands: Object.values(byCommand).reduce((sum, n) => sum + n, 0),
    byCommand,
    commandUsec: usec - (idle?.commandUsec ?? 0) * idleShare,
    netInputBytes: after.netInputBytes - before.netInputBytes - (idle?.netInputBytes ?? 0) * idleShare,
    netOutputBytes: after.netOutputBytes - before.netOutputBytes - (idle?.netOutputBytes ?? 0) * idleShare,
    cpuMs: after.cpuMs - before.cpuMs - (idle?.cpuMs ?? 0) * idleShare,
    seconds,
  };
}

/** The commands most used, as "evalsha 25, get 44, …" per unit, for the bench's record. */
export function topCommands(use: RedisUse, units: number, count = 6): string {
  return Object.entries(use.byCommand)
    .sort(([, a], [, b]) => b - a)
    .slice(0, count)
    .map(([name, n]) => `${name} ${Math.round((n / units) * 10) / 10}`)
    .join(', ');
}

/** The Redis figures of one kind of work, per unit of it. */
export function redisFiguresPer(unit: string, use: RedisUse, units: number) {
  return {
    [`redisCommandsPer${unit}`]: round(use.commands / units, 1),
    [`redisCpuMsPer${unit}`]: round(use.cpuMs / units, 3),
    [`redisCommandUsecPer${unit}`]: round(use.commandUsec / units, 1),
    [`redisBytesInPer${unit}`]: round(use.netInputBytes / units, 0),
    [`redisBytesOutPer${unit}`]: round(use.netOutputBytes / units, 0),
    [`redisCommandsPer${unit}ByName`]: topCommands(use, units),
  };
}
