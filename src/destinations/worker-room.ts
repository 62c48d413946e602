// The pushes one shard's CalDAV worker runs at once (issue 43): its BullMQ jobs, and the pushes it parked in this
// process's host lines (host-gate.ts) and runs itself when a place there is given up, with no round through the
// queue. Together they stay within the worker's share of CALDAV_CONCURRENCY: each parked push running lowers by
// one what BullMQ may fetch (the worker's concurrency, which BullMQ reads before each fetch), and a parked push
// brought back while the share is full waits here, in the order it came, for the next job or push to end. BullMQ
// always keeps one fetch (it refuses a concurrency of 0), so parked pushes filling the share leave room for one
// job more: the queue never stops behind them.
//
// What waits here, or runs, is lost with the process, not its changes: still due in Postgres, it is queued again
// by the next dispatch.
import { settlesWithin } from '../lib/redis-close.js';

export interface WorkerRoom {
  /** Runs one of the worker's jobs, counted while it runs; pushes waiting for room start as it ends. */
  job<T>(work: () => Promise<T>): Promise<T>;
  /** A parked push brought back: started now if there is room, else when a job or push ends. */
  resume(key: string, start: () => Promise<void>): void;
  /** A push brought back under `key` is waiting for room. */
  waiting(key: string): boolean;
  /** Its job came back (queued again elsewhere): it no longer waits here. */
  forget(key: string): void;
  /** Nothing starts after this; resolves once the pushes it started have ended, or after `graceMs`. */
  close(graceMs: number): Promise<void>;
}

/** `share`: the worker's pushes at once; `fetchLimit` sets what BullMQ may have under way (its concurrency). */
export function createWorkerRoom(share: number, fetchLimit: (jobs: number) => void): WorkerRoom {
  let jobs = 0;
  let closed = false;
  const running = new Set<Promise<void>>();
  const ready = new Map<string, () => Promise<void>>();
  const limitFetches = () => fetchLimit(Math.max(1, share - running.size));
  const fill = () => {
    while (!closed && ready.size > 0 && jobs + running.size < share) {
      const [key, start] = ready.entries().next().value!;
      ready.delete(key);
      const run: Promise<void> = start()
        .catch(() => undefined)
        .finally(() => {
          running.delete(run);
          limitFetches();
          fill();
        });
      running.add(run);
      limitFetches();
    }
  };
  return {
    async job(work) {
      jobs++;
      try {
        return await work();
      } finally {
        jobs--;
        fill();
      }
    },
    resume(key, start) {
      if (closed) return;
      ready.set(key, start);
      fill();
    },
    waiting: (key) => ready.has(key),
    forget: (key) => void ready.delete(key),
    async close(graceMs) {
      closed = true;
      ready.clear();
      await settlesWithin(Promise.allSettled(running), graceMs);
    },
  };
}
