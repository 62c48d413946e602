// A small seeded PRNG so every simulated world (users, bookings, random faults) is repeatable from its seed.

export interface Prng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (both inclusive). */
  intBetween(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
  /** Lower-case base36 identifier of the given length. */
  idChars(length: number): string;
}

/** mulberry32: 32-bit state, good enough spread for test data, and trivially reproducible. */
export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const intBetween = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    intBetween,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[intBetween(0, items.length - 1)] as T;
    },
    chance: (probability) => probability > 0 && next() < probability,
    idChars(length) {
      let out = '';
      for (let i = 0; i < length; i++) out += intBetween(0, 35).toString(36);
      return out;
    },
  };
}

/** Independent stream for one purpose, so adding draws in one place does not reshuffle another. */
export function derivePrng(seed: number, purpose: string): Prng {
  let hash = seed >>> 0;
  for (const ch of purpose) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return createPrng(hash);
}
