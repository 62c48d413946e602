// One log line per distinct error per interval, however many times it happens. While Redis is down every
// client, queue and worker reports the same refused connection on each reconnect attempt, and while Redis is
// full a BullMQ worker can meet the same OOM reply thousands of times a second: logged one by one, an outage
// wrote 1,122 lines a minute and a full Redis 3 MB a second. Identical errors (same code or name, same message)
// from any source are counted; the first is logged at once and the next one after the interval carries how
// many were held back meanwhile. When a source works again, one line says for how long it failed and how often.
import { LRUCache } from 'lru-cache';
import type { Logger } from '../log.js';
import { coerceError } from './coerce-error.js';

export const REPEATED_ERROR_INTERVAL_MS = 60_000;

export interface RepeatedErrorLog {
  /** Logs `error` from `source`, unless an identical one was logged within the interval: then it is counted. */
  report(source: string, error: unknown): void;
  /** `source` works again: one info line, if it reported errors since it last recovered. */
  recovered(source: string): void;
}

interface Held {
  loggedAt: number;
  /** Identical errors since the last line, and who reported them. */
  count: number;
  sources: Set<string>;
}

interface Failing {
  since: number;
  errors: number;
}

/**
 * ioredis attaches the failed command to its errors, arguments included: key names, job data, an OAuth
 * state's verifier inside a script's JSON argument. The command's name is all the log needs.
 */
function loggable(error: Error): { err: Error; command?: unknown } {
  const command = (error as { command?: { name?: unknown } }).command;
  if (command === undefined) return { err: error };
  const bare = new Error(error.message);
  bare.name = error.name;
  if (error.stack !== undefined) bare.stack = error.stack;
  return { err: bare, command: command.name };
}

function identityOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return `${typeof code === 'string' || typeof code === 'number' ? code : error.name}\u0000${error.message}`;
}

export function createRepeatedErrorLog(
  logger: Logger,
  options: {
    intervalMs?: number;
    now?: () => number;
    /** Told of every error, logged or held back (a metric keeps the rate the log no longer shows). */
    onReport?: (source: string) => void;
  } = {},
): RepeatedErrorLog {
  const intervalMs = options.intervalMs ?? REPEATED_ERROR_INTERVAL_MS;
  const now = options.now ?? Date.now;
  // Bounded: messages that embed ids would otherwise each keep an entry for good.
  const held = new LRUCache<string, Held>({ max: 500 });
  const failing = new Map<string, Failing>();

  return {
    report(source, thrown) {
      const error = coerceError(thrown);
      options.onReport?.(source);
      const at = now();
      const streak = failing.get(source);
      if (streak) streak.errors += 1;
      else failing.set(source, { since: at, errors: 1 });

      const key = identityOf(error);
      const entry = held.get(key);
      if (entry !== undefined && at - entry.loggedAt < intervalMs) {
        entry.count += 1;
        entry.sources.add(source);
        return;
      }
      const repeated = entry?.count ?? 0;
      const sources = entry ? [...entry.sources] : [];
      held.set(key, { loggedAt: at, count: 0, sources: new Set() });
      logger.error(
        {
          ...loggable(error),
          source,
          ...(repeated > 0
            ? { repeated, repeatedFrom: sources, sinceSeconds: (at - entry!.loggedAt) / 1000 }
            : {}),
        },
        `${source}: ${error.message}${repeated > 0 ? ` (and ${repeated} more like it)` : ''}`,
      );
    },

    recovered(source) {
      const streak = failing.get(source);
      if (streak === undefined) return;
      failing.delete(source);
      logger.info(
        { source, errors: streak.errors, failingSeconds: Math.round((now() - streak.since) / 100) / 10 },
        `${source} works again`,
      );
    },
  };
}
