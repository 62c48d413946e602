// One worker process's line at each CalDAV host (issue 43): pushes that have read and rendered their feed and
// found every slot of their host taken wait here, in the order they came, and the slot one of this process's
// pushes lets go is tried at once by the first of them, so a push ready to send takes it within a Redis round
// trip, not after a quarter second in the queue's delayed set. Slots let go by other processes are noticed by
// the first in line asking again every HOST_BUSY_RETRY_MS.
//
// A line holds at most `waitingPerHost` pushes, each in one of the worker's slots: with the host's own slots, a
// slow host holds that many of the worker's pushes and no more, and the worker's other slots go to other hosts.
// A push that finds the line full is sent back to the delayed set (caldav-queue.ts) and parked here: each slot
// let go brings the oldest parked push of that host back (promotes its job), so it comes back as a place frees
// rather than by polling; the delay it was sent back with grows with the pushes parked before it, and only
// brings it back when nothing in this process frees a place (another process holds the host's slots).
import {
  HOST_BUSY_RETRY_MS,
  isHostWait,
  type HostLimits,
  type HostSlots,
  type HostWait,
} from './host-limits.js';

export interface HostGate extends Pick<HostLimits, 'holdBack'> {
  /** Busy when the host's line is full: the push is sent back before it reads and renders its feed. */
  looksBusy(host: string): HostWait | undefined;
  /** The host's slots now, after a wait in its line, or how long to wait in the delayed set (line full, held). */
  enter(host: string, lanes: number): Promise<HostSlots | HostWait>;
  /**
   * A push sent back to the delayed set for `host`'s full line: `promote` brings its job back (false when it is
   * no longer delayed), called when a slot of the host is let go in this process.
   */
  park(host: string, jobId: string, promote: () => Promise<boolean>): void;
  /** The job runs again (brought back by its delay or promoted): no longer parked. */
  unpark(jobId: string): void;
}

interface Waiter {
  woken: boolean;
  wake?: () => void;
}

interface Line {
  waiting: Waiter[];
  /** Parked jobs by id, oldest first, each with what brings it back. */
  parked: Map<string, () => Promise<boolean>>;
}

export function createHostGate(
  limits: Pick<HostLimits, 'enter' | 'holdBack'>,
  settings: { waitingPerHost: number; pollMs?: number },
): HostGate {
  const pollMs = settings.pollMs ?? HOST_BUSY_RETRY_MS;
  // One small line per host this process has pushed to, kept: a line dropped while a push is about to join it
  // would leave that push waiting where no slot let go reaches it.
  const lines = new Map<string, Line>();
  const parkedAt = new Map<string, string>();
  const lineOf = (host: string): Line => {
    let line = lines.get(host);
    if (!line) {
      line = { waiting: [], parked: new Map() };
      lines.set(host, line);
    }
    return line;
  };
  const wake = (waiter: Waiter | undefined) => {
    if (!waiter) return;
    waiter.woken = true;
    waiter.wake?.();
  };
  /** Sent back behind the ones parked before it: a place frees for each slot let go, so they come in turn. */
  const full = (line: Line): HostWait => ({
    retryInMs: pollMs * (1 + Math.ceil(line.parked.size / settings.waitingPerHost)),
    reason: 'busy',
  });
  /** One parked push of the host brought back: the oldest whose job is still delayed. */
  const promoteOne = async (host: string) => {
    const line = lines.get(host);
    while (line && line.parked.size > 0) {
      const [jobId, promote] = line.parked.entries().next().value!;
      line.parked.delete(jobId);
      parkedAt.delete(jobId);
      if (await promote().catch(() => false)) return;
    }
  };
  const slotsLettingGo = (host: string, slots: HostSlots): HostSlots => ({
    lanes: slots.lanes,
    release: async () => {
      await slots.release();
      wake(lines.get(host)?.waiting[0]);
      void promoteOne(host);
    },
  });

  return {
    holdBack: (host, ms) => limits.holdBack(host, ms),
    looksBusy(host) {
      const line = lines.get(host);
      return line && line.waiting.length >= settings.waitingPerHost ? full(line) : undefined;
    },
    async enter(host, lanes) {
      const line = lineOf(host);
      if (line.waiting.length >= settings.waitingPerHost) return full(line);
      // In line before the first ask, so a slot let go while it asks wakes it: no wake-up is lost in between.
      const waiter: Waiter = { woken: false };
      line.waiting.push(waiter);
      try {
        for (;;) {
          if (line.waiting[0] === waiter) {
            waiter.woken = false;
            const entered = await limits.enter(host, lanes);
            if (!isHostWait(entered)) return slotsLettingGo(host, entered);
            if (entered.reason === 'held back') return entered;
          }
          await new Promise<void>((resolve) => {
            if (waiter.woken) return resolve();
            const timer = line.waiting[0] === waiter ? setTimeout(resolve, pollMs) : undefined;
            timer?.unref();
            waiter.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          waiter.woken = false;
        }
      } finally {
        line.waiting.splice(line.waiting.indexOf(waiter), 1);
        wake(line.waiting[0]);
      }
    },
    park(host, jobId, promote) {
      lineOf(host).parked.set(jobId, promote);
      parkedAt.set(jobId, host);
    },
    unpark(jobId) {
      const host = parkedAt.get(jobId);
      if (host === undefined) return;
      parkedAt.delete(jobId);
      lines.get(host)?.parked.delete(jobId);
    },
  };
}
