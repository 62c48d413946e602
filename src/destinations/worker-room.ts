// The pushes one shard's CalDAV worker runs at once (issue 43): its BullMQ jobs, and the pushes it parked in this
// process's host lines (host-gate.ts) and runs itself when a place there is given up, with no round through the
// queue. Both take room here before they do anything, in the order they came, and no more than the worker's share
// of CALDAV_CONCURRENCY work at once: a job BullMQ fetched while parked pushes hold the room waits for it, holding
// nothing but its BullMQ lock (and a fetch another process's worker could have had). Lowering BullMQ's own
// concurrency instead would stall it: BullMQ reads a raised one only once a job it holds ends, so a shard could be
// left running one slow push.
import { settlesWithin } from '../lib/redis-close.js';

export interface WorkerRoom {
  /** Runs one of the worker's jobs once there is room; 'closing' without running it once the worker closes. */
  job<T>(work: () => Promise<T>): Promise<T | 'closing'>;
  /** A parked push brought back: started once there is room, unless its job came back first (forget). */
  resume(key: string, start: () => Promise<void>): void;
  /** A push brought back under `key` waits for room or runs. */
  holds(key: string): boolean;
  /** Its job came back: it no longer waits here (one running goes on). */
  forget(key: string): void;
  /** No more starts; jobs waiting end as 'closing'. Resolves once the parked pushes running have ended, or after `graceMs`. */
  close(graceMs: number): Promise<void>;
}

interface Waiting {
  /** Told whether it may start (false: the worker is closing). */
  go(admitted: boolean): void;
}

export function createWorkerRoom(share: number): WorkerRoom {
  let working = 0;
  let closed = false;
  // In the order they came: jobs under a key of their own, parked pushes under theirs.
  const waiting = new Map<string | symbol, Waiting>();
  // Counted: a push brought back again under its key (parked anew by a twin job) may start before the first ends.
  const runningKeys = new Map<string, number>();
  const runningPushes = new Set<Promise<void>>();
  const admit = () => {
    while (!closed && working < share && waiting.size > 0) {
      const [key, next] = waiting.entries().next().value!;
      waiting.delete(key);
      working++;
      next.go(true);
    }
  };
  const leave = () => {
    working--;
    admit();
  };
  return {
    async job(work) {
      if (closed) return 'closing';
      const admitted = await new Promise<boolean>((go) => {
        waiting.set(Symbol('job'), { go });
        admit();
      });
      if (!admitted) return 'closing';
      try {
        return await work();
      } finally {
        leave();
      }
    },
    resume(key, start) {
      if (closed) return;
      waiting.set(key, {
        go: (admitted) => {
          if (!admitted) return;
          runningKeys.set(key, (runningKeys.get(key) ?? 0) + 1);
          const run: Promise<void> = start()
            .catch(() => undefined)
            .finally(() => {
              const left = runningKeys.get(key)! - 1;
              if (left === 0) runningKeys.delete(key);
              else runningKeys.set(key, left);
              runningPushes.delete(run);
              leave();
            });
          runningPushes.add(run);
        },
      });
      admit();
    },
    holds: (key) => waiting.has(key) || runningKeys.has(key),
    forget: (key) => void waiting.delete(key),
    async close(graceMs) {
      closed = true;
      for (const next of waiting.values()) next.go(false);
      waiting.clear();
      await settlesWithin(Promise.allSettled(runningPushes), graceMs);
    },
  };
}
