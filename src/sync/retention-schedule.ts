// The scheduler role prunes history every RETENTION_INTERVAL_SECONDS (store/retention.ts), one process at a
// time: the run holds a Redis lock, and a scheduler that finds it taken skips its turn. A run that fails (a
// store away) is logged and tried at the next interval.
import type { RedisClient } from '../lib/redis-connection.js';
import { LockTimeoutError, withRedisLock } from '../lib/redis-lock.js';
import type { Logger } from '../log.js';
import type { RetentionSettings, RetentionStore } from '../store/retention.js';

export interface RunningRetention {
  /** Prunes now (the first run also happens at start); resolves when this run is over. */
  runNow(): Promise<void>;
  close(): Promise<void>;
}

export function startRetention(deps: {
  retention: RetentionStore;
  redis: RedisClient;
  prefix: string;
  settings: RetentionSettings & { intervalSeconds: number };
  now: () => Date;
  logger: Logger;
}): RunningRetention {
  const abort = new AbortController();
  let running: Promise<void> | undefined;
  const runOnce = async () => {
    try {
      await withRedisLock(
        deps.redis,
        `${deps.prefix}:retention`,
        { ttlMs: 60_000, waitMs: 0 },
        async (lock) => {
          const signal = AbortSignal.any([abort.signal, lock.signal]);
          const started = performance.now();
          const pruned = await deps.retention.prune(deps.settings, {
            now: deps.now(),
            signal,
            onReportDayFailure: ({ connectionId, error }) =>
              deps.logger.warn(
                { err: error, connectionId },
                'could not store a connection’s report days; the next run tries again (its reports compute them)',
              ),
          });
          if (Object.entries(pruned).some(([kind, n]) => kind !== 'batches' && n > 0)) {
            deps.logger.info(
              { ...pruned, ms: Math.round(performance.now() - started) },
              'packed the days that are over and stored their report figures; pruned sync runs and closed slots past their retention; counted each connection’s sync-health day so far',
            );
          }
        },
      );
    } catch (error: unknown) {
      if (error instanceof LockTimeoutError) return; // another scheduler is pruning
      deps.logger.warn({ err: error }, 'pruning failed; tried again at the next interval');
    }
  };
  const runNow = () => {
    running ??= runOnce().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => void runNow(), deps.settings.intervalSeconds * 1000);
  timer.unref();
  void runNow();
  return {
    runNow,
    async close() {
      clearInterval(timer);
      abort.abort();
      await running;
    },
  };
}
