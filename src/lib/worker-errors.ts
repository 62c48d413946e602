// What a BullMQ worker's 'error' events become: one log line per distinct error per interval (see
// repeated-errors.ts), and a pause when Redis answers with an error reply. BullMQ 6.7's main loop waits
// before retrying only when the connection is lost; when a command is answered with an error it fetches
// again at once. With Redis full (maxmemory under noeviction, as BullMQ requires) the tick worker's
// moveToActive was refused with OOM about 3,500 times a second, each refusal printed by console.error
// (3 MB/s, 60 % of a core). Paused, the worker takes no new jobs for 1 s, then 2, 4, … up to
// MAX_PAUSE_MS while the refusals last; jobs in flight carry on. It counts as working again once a job starts,
// the queue is found empty, or a resumed worker goes unrefused for a while.
import type { Worker } from 'bullmq';
import { isRedisErrorReply } from './redis-errors.js';
import type { RepeatedErrorLog } from './repeated-errors.js';
import type { Logger } from '../log.js';

export const MIN_PAUSE_MS = 1000;
export const MAX_PAUSE_MS = 20_000;
/**
 * How long a resumed worker must go unrefused to count as working again when no job tells: an idle worker
 * blocks up to BullMQ's drainDelay (5 s) before it asks Redis for a job, and BullMQ says 'drained' only when
 * the queue was not empty before.
 */
export const QUIET_AFTER_RESUME_MS = 8000;

export interface WorkerErrorHandling {
  /** Cancels a pending resume; call before closing the worker. */
  stop(): void;
}

export function reportErrorsAndBackOff(
  // Any job and result types: only the worker's events and pause/resume are used.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  worker: Worker<any, any>,
  options: {
    /** How the worker is named in the log, e.g. "sync worker". */
    source: string;
    errors: RepeatedErrorLog;
    logger: Logger;
    minPauseMs?: number;
    maxPauseMs?: number;
    /** Called when Redis accepts the worker's commands again after refusing them. */
    onRecovered?: () => void;
  },
): WorkerErrorHandling {
  const minPauseMs = options.minPauseMs ?? MIN_PAUSE_MS;
  const maxPauseMs = options.maxPauseMs ?? MAX_PAUSE_MS;
  let nextPauseMs = minPauseMs;
  let refusing = false;
  let resumeTimer: NodeJS.Timeout | undefined;
  let quietTimer: NodeJS.Timeout | undefined;
  let stopped = false;

  const accepted = () => {
    clearTimeout(quietTimer);
    quietTimer = undefined;
    if (!refusing) return;
    refusing = false;
    nextPauseMs = minPauseMs;
    options.errors.recovered(options.source);
    options.onRecovered?.();
  };

  worker.on('error', (error) => {
    options.errors.report(options.source, error);
    if (stopped || !isRedisErrorReply(error) || resumeTimer !== undefined) return;
    clearTimeout(quietTimer);
    quietTimer = undefined;
    if (!refusing) {
      options.logger.warn(
        { source: options.source, firstPauseMs: nextPauseMs, maxPauseMs },
        `Redis refuses the ${options.source}'s commands: it takes no new jobs for a while, longer each time, until Redis accepts them`,
      );
    }
    refusing = true;
    const pauseMs = nextPauseMs;
    nextPauseMs = Math.min(maxPauseMs, nextPauseMs * 2);
    // pause(true) sets the flag before its first await, so the loop that emitted this error stops fetching.
    worker.pause(true).catch((thrown: unknown) => options.errors.report(options.source, thrown));
    resumeTimer = setTimeout(() => {
      resumeTimer = undefined;
      if (stopped || worker.closing) return;
      void worker.resume();
      quietTimer = setTimeout(accepted, QUIET_AFTER_RESUME_MS);
    }, pauseMs);
  });
  // Either means Redis ran moveToActive: a job came, or the queue was found empty.
  worker.on('active', accepted);
  worker.on('drained', accepted);

  return {
    stop() {
      stopped = true;
      clearTimeout(resumeTimer);
      clearTimeout(quietTimer);
      resumeTimer = undefined;
      quietTimer = undefined;
    },
  };
}
