// The simulator's notion of now: the injected (or real) clock plus an offset that setClock/advanceClock move.
// An offset rather than a frozen instant keeps time flowing in the demo; tests inject a fixed clock, so for them
// the simulated time only moves when they move it. At a `speed` above 1 time is compressed: from the moment
// the clock is made, each second of the base clock is `speed` simulated seconds.

export interface SimClock {
  nowMs(): number;
  set(ms: number): void;
  advance(seconds: number): void;
}

export function createSimClock(base: () => Date, speed = 1): SimClock {
  if (!(Number.isFinite(speed) && speed > 0))
    throw new RangeError(`clock speed must be above 0, got ${speed}`);
  const originMs = base().getTime();
  let offsetMs = 0;
  const nowMs = () => originMs + Math.round((base().getTime() - originMs) * speed) + offsetMs;
  return {
    nowMs,
    set(ms) {
      offsetMs += ms - nowMs();
    },
    advance(seconds) {
      offsetMs += Math.round(seconds * 1000);
    },
  };
}
