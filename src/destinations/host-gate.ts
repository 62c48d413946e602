// One worker process's line at each CalDAV host (issue 43): pushes that have read and rendered their feed and
// found every slot of their host taken wait here, in the order they came, and a slot one of this process's pushes
// lets go is handed to the first of them as it is, still held in Redis: a push ready to send has it at once, with
// no round trip to let it go and take it again, and the host never sees the slot free in between. Slots let go by
// other processes are noticed by the first in line asking again every HOST_BUSY_RETRY_MS.
//
// Handing over keeps a slot in this process while it has pushes for the host in line. That is no less fair to
// other processes than before: a slot let go to Redis was asked for again at once by the first here, within a
// round trip, where another process's line asks only every HOST_BUSY_RETRY_MS. A host this process saw held back
// (a Retry-After) gets no handover: its slot goes back to Redis, and the push in line is told to wait; a hold
// another process set is met by the push's own pace before its first request (host-limits.ts).
//
// A line has `waitingPerHost` places, each held by one of the worker's pushes from before it reads its feed
// (takePlace) until it has its slots or will not talk to the server: with the host's own slots, a slow host holds
// that many of the worker's pushes and no more, and the worker's other slots go to other hosts. A push is sent back
// before it reads and renders anything, never after (a place taken only once it was ready sent back six pushes in
// ten that had read their feed, in the caldav-push bench). A push that finds no place is parked here, in the
// order it came, with what brings it back (caldav-queue.ts runs it in this process then, once its worker has
// room): each place given up (its push has its slots, is held back, or will not talk) brings the oldest parked
// push of that host back, and one parked while a place was free comes back at once. So a push is parked only
// while places are taken, and each place taken is given up in time: none is left behind.
import {
  HOST_BUSY_RETRY_MS,
  HOST_HOLD_MAX_MS,
  isHostWait,
  slotsHeldTogether,
  type HostLimits,
  type HostSlot,
  type HostSlots,
  type HostWait,
} from './host-limits.js';

/** A push's place in its host's line, taken before it reads and renders its feed. */
export interface HostPlace {
  /** The host's slots, after a wait in the line, or how long to wait (held back). The place is given up then. */
  enter(lanes: number): Promise<HostSlots | HostWait>;
  /** The push will not talk to the server (nothing to write, or it failed before): its place is free again. */
  leave(): void;
}

export interface HostGate extends Pick<HostLimits, 'holdBack'> {
  /**
   * A place in the host's line, or 'busy' when every place is taken: the push is sent back (parked) before it
   * reads and renders its feed, never after. 'busy' says when to ask again only to a caller that parks nothing.
   */
  takePlace(host: string): HostPlace | HostWait;
  /** A place and the host's slots at once (takePlace, then enter). */
  enter(host: string, lanes: number): Promise<HostSlots | HostWait>;
  /**
   * A push sent back for `host`'s full line, parked under `key` (its job's id): `resume` brings it back (false
   * when it can no longer come), called when a place in the host's line is given up in this process, or at once
   * if one was given up before it was parked. While the host is held back it is let go instead, not called.
   */
  park(host: string, key: string, resume: () => Promise<boolean>): void;
  /** The push runs again by other means (its job came back): no longer parked. */
  unpark(key: string): void;
  /** Parked under `key`, to be brought back by a place given up. */
  isParked(key: string): boolean;
}

/** Why a waiter was woken: a slot handed or let go (ask Redis now), or it became first in line (poll from now). */
type Wake = 'slot' | 'first';

interface Waiter {
  woken?: Wake;
  wake?: (why: Wake) => void;
  /** Asking Redis for slots right now: a slot let go meanwhile goes back to Redis, where it will find it. */
  asking: boolean;
  /** The lanes it asked for: slots are handed to it up to these. */
  wanted: number;
  /** Slots other pushes of this process handed over, still held. */
  handed: HostSlot[];
}

interface Line {
  /** Places taken: pushes reading and rendering their feed on the way to the line, and those waiting in it. */
  places: number;
  waiting: Waiter[];
  /** Parked pushes by key, oldest first, each with what brings it back. */
  parked: Map<string, () => Promise<boolean>>;
  /**
   * Until when this process saw the host held back (a Retry-After it had, or a hold another process set, met in
   * line): no slot is handed over and no parked push brought back before then.
   */
  heldUntilMs: number;
}

export function createHostGate(
  limits: Pick<HostLimits, 'enter' | 'holdBack'>,
  settings: { waitingPerHost: number; pollMs?: number; now?: () => number },
): HostGate {
  const pollMs = settings.pollMs ?? HOST_BUSY_RETRY_MS;
  const now = settings.now ?? Date.now;
  // One small line per host this process has pushed to, kept: a line dropped while a push is about to join it
  // would leave that push waiting where no slot let go reaches it.
  const lines = new Map<string, Line>();
  const parkedAt = new Map<string, string>();
  const lineOf = (host: string): Line => {
    let line = lines.get(host);
    if (!line) {
      line = { places: 0, waiting: [], parked: new Map(), heldUntilMs: 0 };
      lines.set(host, line);
    }
    return line;
  };
  const wake = (waiter: Waiter | undefined, why: Wake) => {
    if (!waiter) return;
    // A slot beats a move up the line: a waiter woken for both asks Redis.
    if (waiter.woken !== 'slot') waiter.woken = why;
    waiter.wake?.(waiter.woken);
  };
  /** Every place taken: the push is parked, to come back when one is given up. */
  const FULL: HostWait = { retryInMs: pollMs, reason: 'busy' };
  /**
   * One parked push of the host brought back, for the place just given up: the oldest that can still come. While
   * the host is held back none would get a slot: they are let go (unparked, still due, the dispatcher queues them
   * again, and their jobs wait out the hold in the delayed set), so that each reads its feed once before it meets
   * the hold, as a job does, not once more as a parked push brought back.
   */
  const resumeOne = async (host: string) => {
    const line = lines.get(host);
    if (line && line.heldUntilMs > now()) {
      for (const key of line.parked.keys()) parkedAt.delete(key);
      line.parked.clear();
      return;
    }
    while (line && line.parked.size > 0) {
      const [key, resume] = line.parked.entries().next().value!;
      line.parked.delete(key);
      parkedAt.delete(key);
      if (await resume().catch(() => false)) return;
    }
  };
  /**
   * A slot let go: to the first push in line still short of the lanes it asked for, unless it is asking Redis
   * (then to Redis, where it will find it) or the host is held back; else to Redis. Several slots let go at once
   * fill the first push up to its lanes, then the next.
   */
  const letGo = async (host: string, slot: HostSlot) => {
    const line = lines.get(host);
    const short = line?.waiting.find((waiter) => waiter.handed.length < waiter.wanted);
    if (short && !short.asking && line!.heldUntilMs <= now()) {
      short.handed.push(slot);
      wake(short, 'slot');
    } else {
      await slot.release();
      wake(short, 'slot');
    }
  };
  const slotsLettingGo = (host: string, slots: HostSlots): HostSlots => {
    const held = slots.held.map((slot) => ({ release: () => letGo(host, slot) }));
    return slotsHeldTogether(held);
  };

  /** Waits in the host's line for slots: handed over by a push of this process, or found in Redis when first. */
  const waitInLine = async (host: string, line: Line, lanes: number): Promise<HostSlots | HostWait> => {
    // In line before the first ask, so a slot let go while it asks wakes it: no wake-up is lost in between.
    const waiter: Waiter = { asking: false, wanted: lanes, handed: [] };
    line.waiting.push(waiter);
    let why: Wake = 'slot';
    try {
      for (;;) {
        if (waiter.handed.length > 0) return slotsLettingGo(host, slotsHeldTogether(waiter.handed));
        if (line.waiting[0] === waiter && why === 'slot') {
          // Marked until its answer is acted on (same microtask): no slot is handed to it meanwhile.
          let entered: HostSlots | HostWait;
          waiter.asking = true;
          try {
            entered = await limits.enter(host, lanes);
          } finally {
            waiter.asking = false;
          }
          if (!isHostWait(entered)) return slotsLettingGo(host, entered);
          if (entered.reason === 'held back') {
            // Held back by another process's answer: seen here now, as if this process had had it.
            line.heldUntilMs = Math.max(line.heldUntilMs, now() + entered.retryInMs);
            return entered;
          }
        }
        why = await new Promise<Wake>((resolve) => {
          if (waiter.woken) return resolve(waiter.woken);
          const timer = line.waiting[0] === waiter ? setTimeout(() => resolve('slot'), pollMs) : undefined;
          timer?.unref();
          waiter.wake = (woken) => {
            clearTimeout(timer);
            resolve(woken);
          };
        });
        waiter.woken = undefined;
      }
    } finally {
      line.waiting.splice(line.waiting.indexOf(waiter), 1);
      // The next in line polls from now; it asks at once only if a slot came free for it to find.
      wake(line.waiting[0], waiter.handed.length > 0 ? 'first' : 'slot');
    }
  };

  const unpark = (key: string) => {
    const host = parkedAt.get(key);
    if (host === undefined) return;
    parkedAt.delete(key);
    lines.get(host)?.parked.delete(key);
  };

  const takePlace = (host: string): HostPlace | HostWait => {
    const line = lineOf(host);
    if (line.places >= settings.waitingPerHost) return FULL;
    line.places++;
    let taken = true;
    // A place given up, however, is the oldest parked push's.
    const giveUp = () => {
      if (!taken) return;
      taken = false;
      line.places--;
      void resumeOne(host);
    };
    return {
      async enter(lanes) {
        if (!taken) throw new Error("a place in a host's line is entered once, and not after it was left");
        try {
          return await waitInLine(host, line, lanes);
        } finally {
          giveUp();
        }
      },
      leave: giveUp,
    };
  };

  return {
    holdBack: async (host, ms) => {
      const line = lineOf(host);
      line.heldUntilMs = Math.max(line.heldUntilMs, now() + Math.min(ms, HOST_HOLD_MAX_MS));
      await limits.holdBack(host, ms);
    },
    takePlace,
    async enter(host, lanes) {
      const place = takePlace(host);
      return isHostWait(place) ? place : place.enter(lanes);
    },
    park(host, key, resume) {
      unpark(key);
      const line = lineOf(host);
      line.parked.set(key, resume);
      parkedAt.set(key, host);
      // Every place given up since it was found full (before it was parked here): no place given up would bring
      // it back, so it comes back now.
      if (line.places < settings.waitingPerHost) void resumeOne(host);
    },
    unpark,
    isParked: (key) => parkedAt.has(key),
  };
}
