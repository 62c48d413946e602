// Log-bucket histograms (issue 43): a percentile read back from the counts is within RELATIVE_ERROR of
// percentile_cont's over the values themselves, after adding and subtracting histograms as stored running totals
// are, and the bytes they are stored as read back the same.
import { describe, expect, it } from '@jest/globals';
import {
  addHistograms,
  bucketKey,
  bucketValue,
  decodeHistograms,
  encodeHistograms,
  histogramOf,
  HistogramSums,
  RELATIVE_ERROR,
  SMALLEST,
  type Histogram,
  type Histograms,
} from '../../src/lib/log-histogram.js';

/** Each count of `histograms` cut to a random part of it, some to nothing: a running total from earlier. */
function halved(histograms: Histograms, random: () => number): Histograms {
  const earlier: Histograms = new Map();
  for (const [name, { keys, counts }] of histograms) {
    if (random() < 0.2) continue;
    earlier.set(name, histogramOf(keys.map((key, i) => [key, Math.floor(counts[i]! * random())] as const)));
  }
  return earlier;
}

/** percentile_cont as Postgres computes it: interpolated between the values around rank p·(n−1). */
function exactPercentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = p * (sorted.length - 1);
  const lower = Math.floor(rank);
  const below = sorted[lower]!;
  return rank === lower ? below : below + (rank - lower) * (sorted[lower + 1]! - below);
}

/**
 * The p-th percentiles of a histogram read plainly, the definition HistogramSums keeps to: the value at rank
 * p·(n−1) (the first bucket whose running count passes it; past every bucket, the last), interpolated with the next.
 */
function plainPercentiles(histogram: Histogram, ps: readonly number[]): (number | null)[] {
  const total = histogram.counts.reduce((sum, count) => sum + count, 0);
  if (total <= 0) return ps.map(() => null);
  const { keys, counts } = histogram;
  const valueAt = (index: number): number => {
    let seen = 0;
    for (let i = 0; i < keys.length; i++) {
      seen += counts[i]!;
      if (index < seen) return bucketValue(keys[i]!);
    }
    return bucketValue(keys[keys.length - 1]!);
  };
  return ps.map((p) => {
    const rank = p * (total - 1);
    const lower = Math.floor(rank);
    const below = valueAt(lower);
    return rank === lower ? below : below + (rank - lower) * (valueAt(lower + 1) - below);
  });
}

/** The p-th percentile of histograms' durations, as a report reads it: summed in a HistogramSums. */
function percentileOf(histograms: Histograms, p: number): number | null {
  const sums = new HistogramSums();
  sums.addBytes(encodeHistograms(histograms));
  return sums.percentiles('duration', [p])[0]!;
}

function histogramsOfValues(values: number[]): Histograms {
  return new Map([['duration', histogramOf(values.map((value) => [bucketKey(value), 1] as const))]]);
}

/** A seeded PRNG, so a failure reproduces. */
function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('log-bucket histograms', () => {
  it('reads every value back within the relative error, and values under the smallest as 0', () => {
    for (let value = SMALLEST; value < 1e7; value *= 1.37) {
      const readBack = bucketValue(bucketKey(value));
      expect(Math.abs(readBack - value) / value).toBeLessThanOrEqual(RELATIVE_ERROR + 1e-12);
    }
    expect(bucketValue(bucketKey(0))).toBe(0);
    expect(bucketValue(bucketKey(SMALLEST / 2))).toBe(0);
    // An infinite value (a run with no end) is counted in the largest number's bucket: a whole key, which the
    // bytes can hold and a sum can count, never a key of Infinity.
    const endless = histogramsOfValues([1, Infinity]);
    expect(endless.get('duration')!.keys.every(Number.isInteger)).toBe(true);
    expect(decodeHistograms(encodeHistograms(endless))).toEqual(endless);
    expect(percentileOf(endless, 1)).toBeGreaterThan(1e307);
  });

  it('answers percentile_cont within the relative error, interpolated ranks included', () => {
    const random = prng(43);
    for (const size of [1, 2, 3, 10, 57, 1000]) {
      // Durations over four orders of magnitude, and a cluster, so neighbouring ranks sit in distant buckets.
      const values = Array.from({ length: size }, (_, i) =>
        i % 5 === 0 ? 0.2 + random() * 0.01 : 0.05 * 10 ** (random() * 4),
      );
      for (const p of [0, 0.5, 0.95, 1]) {
        const exact = exactPercentile(values, p);
        const estimate = percentileOf(histogramsOfValues(values), p)!;
        expect(Math.abs(estimate - exact)).toBeLessThanOrEqual(exact * RELATIVE_ERROR + 1e-12);
      }
    }
    expect(percentileOf(new Map(), 0.5)).toBeNull();
    expect(percentileOf(new Map([['duration', { keys: [], counts: [] }]]), 0.5)).toBeNull();
  });

  it('gives a range of running totals as the total at its end less the total before it', () => {
    const random = prng(7);
    const days = Array.from({ length: 30 }, () => Array.from({ length: 24 }, () => 0.1 + random() * 30));
    const running: Histograms[] = [];
    const total: Histograms = new Map();
    for (const day of days) running.push(new Map(addHistograms(total, histogramsOfValues(day))));
    // Days 10–19: through day 19 less through day 9.
    const range = addHistograms(addHistograms(new Map(), running[19]!), running[9]!, -1);
    const values = days.slice(10, 20).flat();
    for (const p of [0.5, 0.95]) {
      const exact = exactPercentile(values, p);
      expect(Math.abs(percentileOf(range, p)! - exact)).toBeLessThanOrEqual(exact * RELATIVE_ERROR);
    }
    // A bucket that comes to nothing is dropped, so an empty range reads as no values.
    expect(addHistograms(addHistograms(new Map(), running[5]!), running[5]!, -1).size).toBe(0);
  });

  it('adds stored bytes and values up as decoding and adding does, one sum reused after another', () => {
    const random = prng(11);
    // Histograms of a few names (some only on one side, some empty), keys spread and often shared.
    const randomHistograms = (): Histograms => {
      const histograms: Histograms = new Map();
      // A name past 127 bytes, keys and counts past one byte: every varint path of the reading.
      for (const name of ['duration', '0-24h', '1-3d', '3-7d', 'é-band', 'b'.repeat(200)]) {
        if (random() < 0.3) continue;
        const pairs = Array.from(
          { length: Math.floor(random() * 40) },
          () =>
            [
              Math.floor(random() * (random() < 0.5 ? 60 : 40_000)),
              1 + Math.floor(random() * (random() < 0.5 ? 5 : 2 ** 36)),
            ] as const,
        );
        histograms.set(name, histogramOf(pairs));
      }
      return histograms;
    };
    const ps = [0, 1 / 3, 0.5, 0.75, 0.95, 1];
    // One sum for every trial, as a report keeps one for all its connections: what a connection added must
    // not stay in the next one's.
    const sums = new HistogramSums();
    for (let trial = 0; trial < 300; trial++) {
      // A range of running totals (the one at its end less one before it, which holds no more), a day so far,
      // and values counted one by one, as a report's row adds them.
      const end = randomHistograms();
      // A running total before the range holds no more than the one at its end, as stored totals do; and
      // sometimes anything at all (counts that net below nothing), which the sum must read the same way.
      const before = trial % 3 === 0 ? randomHistograms() : halved(end, random);
      const soFar = randomHistograms();
      const values = Array.from({ length: Math.floor(random() * 30) }, () => 0.05 * 10 ** (random() * 4));
      // Added into nothing first, so that a histogram that comes to nothing is dropped.
      const expected = addHistograms(
        addHistograms(addHistograms(addHistograms(new Map(), end), before, -1), soFar),
        histogramsOfValues(values),
      );
      sums.clear();
      sums.addBytes(encodeHistograms(end));
      sums.addBytes(encodeHistograms(before), -1);
      sums.addBytes(trial % 5 === 0 ? null : encodeHistograms(soFar));
      if (trial % 5 === 0) addHistograms(expected, soFar, -1);
      for (const value of values) sums.addValue('duration', value);
      // Named are the histograms whose counts come to more than nothing.
      const counted = [...expected].filter(
        ([, { counts }]) => counts.reduce((sum, count) => sum + count, 0) > 0,
      );
      expect(sums.names().sort()).toEqual(counted.map(([name]) => name).sort());
      for (const [name, histogram] of expected)
        expect(sums.percentiles(name, ps)).toEqual(plainPercentiles(histogram, ps));
    }
    // Counts netting below nothing between others: the next value is the next key the running count passes,
    // not the next key with a count above nothing.
    sums.clear();
    sums.addBytes(encodeHistograms(new Map([['duration', { keys: [10, 30, 40], counts: [2, 1, 1] }]])));
    sums.addBytes(encodeHistograms(new Map([['duration', { keys: [20], counts: [1] }]])), -1);
    const netted = { keys: [10, 20, 30, 40], counts: [2, -1, 1, 1] };
    expect(sums.percentiles('duration', [0.75])).toEqual(plainPercentiles(netted, [0.75]));
    // Rank 1.5 of the three values: halfway from the second (key 10) to the third, which key 40 brings.
    expect(plainPercentiles(netted, [0.75])[0]).toBeCloseTo((bucketValue(10) + bucketValue(40)) / 2, 12);
    sums.clear();
    expect(sums.names()).toEqual([]);
    expect(sums.percentiles('duration', [0.5])).toEqual([null]);
    // Bytes no encoding wrote end in an error, never in a loop or a guess: a truncated row, and a key of
    // endless continuation bytes (which would add up to NaN).
    const bytes = encodeHistograms(new Map([['duration', { keys: [5, 300], counts: [2, 70_000] }]]));
    expect(() => new HistogramSums().addBytes(bytes.subarray(0, bytes.length - 1))).toThrow(RangeError);
    const endless = Uint8Array.from([
      8,
      ...new TextEncoder().encode('duration'),
      1,
      ...Array(150).fill(0x80),
      0,
      1,
    ]);
    expect(() => new HistogramSums().addBytes(endless)).toThrow(RangeError);
    expect(() => decodeHistograms(endless)).toThrow(RangeError);
  });

  it('stores histograms as bytes that read back the same', () => {
    const histograms: Histograms = new Map([
      ['duration', { keys: [0, 1, 400, 1_900], counts: [3, 1, 70_000, 2 ** 40] }],
      ['0-24h', { keys: [812], counts: [5] }],
      ['7d+', { keys: [], counts: [] }],
    ]);
    const bytes = encodeHistograms(histograms);
    expect(decodeHistograms(bytes)).toEqual(histograms);
    expect(decodeHistograms(null).size).toBe(0);
    expect(() => decodeHistograms(bytes.subarray(0, bytes.length - 1))).toThrow(RangeError);
    expect(() => encodeHistograms(new Map([['duration', { keys: [3], counts: [-1] }]]))).toThrow(RangeError);
  });
});
