// The simulator's notion of now: the injected (or real) clock plus an offset that setClock/advanceClock move.
// An offset rather than a frozen instant keeps time flowing in the demo; tests inject a fixed clock, so for them
// the simulated time only moves when they move it.

export interface SimClock {
  nowMs(): number;
  set(ms: number): void;
  advance(seconds: number): void;
}

export function createSimClock(base: () => Date): SimClock {
  let offsetMs = 0;
  const nowMs = () => base().getTime() + offsetMs;
  return {
    nowMs,
    set(ms) {
      offsetMs = ms - base().getTime();
    },
    advance(seconds) {
      offsetMs += Math.round(seconds * 1000);
    },
  };
}
