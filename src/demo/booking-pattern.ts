// Who books what in the demo's history: a seeded, plausible pattern and nothing more. Each account is
// booked at a steady share of the time it offers, as Poisson arrivals; people book near-term slots (the
// chance of a slot halves with every two days it lies ahead), and now and then cancel a booking.
// Pure functions of a PRNG and data; demo-history.ts applies them through the simulator's control API.
import type { Prng } from '../simulator/index.js';
import type { WeeklyHours } from '../simulator/index.js';

const DAY_MS = 86_400_000;

export interface Offer {
  eventId: string;
  startMs: number;
}

/** A Poisson draw (Knuth's method; fine for the small means used here). */
export function poisson(prng: Prng, mean: number): number {
  if (mean <= 0) return 0;
  const limit = Math.exp(-mean);
  let count = 0;
  for (let product = prng.next(); product > limit; product *= prng.next()) count++;
  return count;
}

/** Minutes a week of working hours offers ('24:00' allowed as an end). */
export function weeklyMinutes(hours: WeeklyHours): number {
  const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  return Object.values(hours)
    .flat()
    .reduce((sum, range) => sum + minutes(range.end) - minutes(range.start), 0);
}

export interface BookingRate {
  /** Working minutes a week (weeklyMinutes). */
  weeklyMinutes: number;
  /** Mean length of the account's bookable event types. */
  meanDurationMinutes: number;
  /** Share of the offered time that ends up booked, e.g. 0.35. */
  share: number;
  /** Length of the period the bookings arrive in. */
  periodMs: number;
}

/** Bookings expected in one period: enough to book `share` of the offered time in the long run. */
export function meanBookingsPer(rate: BookingRate): number {
  if (rate.meanDurationMinutes <= 0) return 0;
  const offeredPerDay = rate.weeklyMinutes / 7;
  return (rate.share * offeredPerDay * (rate.periodMs / DAY_MS)) / rate.meanDurationMinutes;
}

/**
 * One of `offers` (slots open at `nowMs`), picked with a weight that halves every `halfLifeDays` of lead
 * time; undefined when there are none.
 */
export function pickNearTermOffer(
  prng: Prng,
  offers: readonly Offer[],
  nowMs: number,
  halfLifeDays = 2,
): Offer | undefined {
  const weights = offers.map((o) => 0.5 ** (Math.max(0, o.startMs - nowMs) / DAY_MS / halfLifeDays));
  const total = weights.reduce((a, b) => a + b, 0);
  if (total === 0) return undefined;
  let target = prng.next() * total;
  for (let i = 0; i < offers.length; i++) {
    target -= weights[i] ?? 0;
    if (target < 0) return offers[i];
  }
  return offers[offers.length - 1];
}

/** `count` instants in (fromMs, toMs), ascending: when the bookings of one period are made. */
export function arrivalTimes(prng: Prng, count: number, fromMs: number, toMs: number): number[] {
  return Array.from({ length: count }, () => fromMs + 1 + Math.floor(prng.next() * (toMs - fromMs - 1))).sort(
    (a, b) => a - b,
  );
}
