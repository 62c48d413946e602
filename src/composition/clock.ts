// The time every part of a process reads: the system's, or a test's or the demo's (they move it by hand).
export interface Clock {
  now: () => Date;
  random: () => number;
  /** Runs `run` every `periodMs` until stopped (the scheduler's watchdog); absent: setInterval. */
  every?: (periodMs: number, run: () => Promise<void>) => () => void;
}

export const systemClock: Clock = { now: () => new Date(), random: Math.random };
