// The demo's one clock, read by the simulator and by every slotfeed role alike: real time plus an offset. On a
// fresh database the demo moves it weeks into the past and steps it forward to record a history through the
// real sync path (demo-history.ts), then brings it back to the present, where it stays for the live daemon.
// One clock for both sides means the simulator's tokens, slots and bookings and slotfeed's snapshots can
// never disagree about what time it is, as two clocks set one after the other could by a few milliseconds.
import type { Clock } from '../composition/clock.js';

export interface DemoClock extends Clock {
  /** From now on, time flows on from `instant`. */
  travelTo(instant: Date): void;
  /** Real time again, for good: what the live daemon runs on. */
  backToPresent(): void;
}

export function createDemoClock(real: () => number = Date.now): DemoClock {
  let offsetMs = 0;
  return {
    now: () => new Date(real() + offsetMs),
    random: Math.random,
    travelTo(instant) {
      offsetMs = instant.getTime() - real();
    },
    backToPresent() {
      offsetMs = 0;
    },
  };
}
