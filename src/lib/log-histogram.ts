// Counts of values in logarithmic buckets, DDSketch's mapping (a bucket's highest value is RATIO times its
// lowest), so a percentile read back from the counts is within RELATIVE_ERROR of the exact one. Kept as counts
// rather than a library's sketch because reports subtract them: a running total stored per day, the days of a
// range are the total at its end less the total before it (store/sync-health-days.ts), and no JS sketch library
// offers subtraction. Values are counted into buckets here (bucketKey), from what a query returns of them
// (report-queries/sync-health-figures.ts); stored counts travel between Postgres and here as bytes
// (encodeHistograms), a few hundred a histogram.

/** Largest relative error of a value read back from its bucket: 1 %. */
export const RELATIVE_ERROR = 0.01;
/** A bucket's highest value over its lowest. */
export const RATIO = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR);
/** Values below this (a run of under a millisecond, a staleness of none) share bucket 0 and read back as 0. */
export const SMALLEST = 0.001;

/**
 * Counts by bucket key, keys ascending and each count above 0: arrays rather than a Map, merged as sorted arrays
 * where the retention run adds a day to a running total (a report sums them in HistogramSums instead).
 */
export interface Histogram {
  keys: number[];
  counts: number[];
}
/** Histograms by name (sync-health: 'duration' and one per date band). */
export type Histograms = Map<string, Histogram>;

/** A histogram of `[key, count]` pairs in any order (counts of one key added up). */
export function histogramOf(pairs: Iterable<readonly [number, number]>): Histogram {
  const byKey = new Map<number, number>();
  for (const [key, count] of pairs) byKey.set(key, (byKey.get(key) ?? 0) + count);
  const sorted = [...byKey].filter(([, count]) => count !== 0).sort(([x], [y]) => x - y);
  return { keys: sorted.map(([key]) => key), counts: sorted.map(([, count]) => count) };
}

/**
 * The key of `value`'s bucket: 0 below SMALLEST (or not a number), else 1 + ⌈log_RATIO(value / SMALLEST)⌉; an
 * infinite value goes in the largest number's bucket, so that every key is a whole number that can be stored.
 */
export function bucketKey(value: number): number {
  if (!(value >= SMALLEST)) return 0;
  return 1 + Math.ceil(Math.log(Math.min(value / SMALLEST, Number.MAX_VALUE)) / Math.log(RATIO));
}

/** The value a bucket reads back as: within RELATIVE_ERROR of every value in it. */
export function bucketValue(key: number): number {
  if (key <= 0) return 0;
  return (2 * SMALLEST * RATIO ** (key - 1)) / (RATIO + 1);
}

/** `a` plus `sign` × `b`, merged by key; a bucket whose count comes to 0 is dropped. */
function mergedHistogram(a: Histogram, b: Histogram, sign: 1 | -1): Histogram {
  const keys: number[] = [];
  const counts: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.keys.length || j < b.keys.length) {
    const keyA = i < a.keys.length ? a.keys[i]! : Infinity;
    const keyB = j < b.keys.length ? b.keys[j]! : Infinity;
    const key = Math.min(keyA, keyB);
    const count = (keyA === key ? a.counts[i++]! : 0) + (keyB === key ? sign * b.counts[j++]! : 0);
    if (count !== 0) {
      keys.push(key);
      counts.push(count);
    }
  }
  return { keys, counts };
}

/** `into` plus `sign` × `from`, in place by name; a histogram that comes to nothing is dropped. */
export function addHistograms(into: Histograms, from: Histograms, sign: 1 | -1 = 1): Histograms {
  for (const [name, histogram] of from) {
    const sum = mergedHistogram(into.get(name) ?? { keys: [], counts: [] }, histogram, sign);
    if (sum.keys.length > 0) into.set(name, sum);
    else into.delete(name);
  }
  return into;
}

// The bytes: for each histogram its name's length and UTF-8, its bucket count, then each bucket as the key's
// distance from the one before and its count, all unsigned LEB128 varints. Keys are ascending, so distances are
// small, and most counts fit a byte or two.

function writeVarint(out: number[], value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/** The histograms as bytes (decodeHistograms reads them). Counts must be whole and not negative. */
export function encodeHistograms(histograms: Histograms): Uint8Array {
  const out: number[] = [];
  const names = [...histograms.keys()].sort();
  for (const name of names) {
    const nameBytes = new TextEncoder().encode(name);
    writeVarint(out, nameBytes.length);
    out.push(...nameBytes);
    const { keys, counts } = histograms.get(name)!;
    writeVarint(out, keys.length);
    let previous = 0;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const count = counts[i]!;
      if (!Number.isInteger(count) || count < 0) throw new RangeError(`A histogram count of ${count}`);
      writeVarint(out, key - previous);
      writeVarint(out, count);
      previous = key;
    }
  }
  return Uint8Array.from(out);
}

const utf8 = new TextDecoder();
const NO_BYTES = new Uint8Array(0);

/**
 * A cursor over histograms' bytes: a name, its bucket count, then each bucket's key distance and count. A report
 * reads two stored rows a connection for thousands of connections (sync-health over all of them), so reading is
 * a loop over the bytes with arrays sized up front, and nothing made per number.
 */
class HistogramBytes {
  private at = 0;
  constructor(private readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.at >= this.bytes.length;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.at >= this.bytes.length) throw new RangeError('Histogram bytes end mid-number');
      // Past 2^56 a number is no count or key written here; longer runs of bytes would overflow to NaN.
      if (scale > 2 ** 49) throw new RangeError('Histogram bytes hold a number past any count');
      const byte = this.bytes[this.at++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
  }

  /** The next histogram's name: short and nearly always ASCII, which needs no TextDecoder. */
  name(): string {
    const length = this.varint();
    const from = this.at;
    const to = from + length;
    if (to > this.bytes.length) throw new RangeError('Histogram bytes end mid-name');
    this.at = to;
    let name = '';
    for (let i = from; i < to; i++) {
      const byte = this.bytes[i]!;
      if (byte >= 0x80) return utf8.decode(this.bytes.subarray(from, to));
      name += String.fromCharCode(byte);
    }
    return name;
  }

  /** The next histogram's bucket count, after its name. */
  buckets(): number {
    const buckets = this.varint();
    // Each bucket takes two bytes at least: a count past that is not from encodeHistograms.
    if (buckets * 2 > this.bytes.length - this.at) throw new RangeError('Histogram bytes end mid-number');
    return buckets;
  }
}

export function decodeHistograms(bytes: Uint8Array | null | undefined): Histograms {
  const histograms: Histograms = new Map();
  const reader = new HistogramBytes(bytes ?? NO_BYTES);
  while (!reader.done) {
    const name = reader.name();
    const buckets = reader.buckets();
    const keys = new Array<number>(buckets);
    const counts = new Array<number>(buckets);
    let key = 0;
    for (let i = 0; i < buckets; i++) {
      key += reader.varint();
      keys[i] = key;
      counts[i] = reader.varint();
    }
    histograms.set(name, { keys, counts });
  }
  return histograms;
}

/** One name's counts in HistogramSums: by key, with the range of keys touched and their sum. */
interface DenseCounts {
  counts: Float64Array;
  low: number;
  high: number;
  total: number;
}

/** Room for keys up to a value of ~5·10^14 s from the start (10^9 s is key 1,383); more is made when a key needs it. */
const FIRST_KEYS = 2048;

/**
 * Histograms added up from several sources (stored bytes, single values) and read as percentiles: a report over
 * every connection sums three or four a connection (a range's two running totals, its day so far, the runs since).
 * Merging sorted arrays built a histogram at every step, a second for 10,000 connections' year, a third of it in
 * garbage collection; here each name's counts sit in one array by key, cleared and reused connection after
 * connection. The same sums as addHistograms.
 */
export class HistogramSums {
  private readonly byName = new Map<string, DenseCounts>();

  /** Forgets every count, keeping the arrays for the next sum. */
  clear(): void {
    for (const dense of this.byName.values()) {
      if (dense.low <= dense.high) dense.counts.fill(0, dense.low, dense.high + 1);
      dense.low = Infinity;
      dense.high = -Infinity;
      dense.total = 0;
    }
  }

  /** The counts of histogram `name`, made empty the first time, with room for keys up to `highestKey`. */
  private countsOf(name: string, highestKey: number): DenseCounts {
    let dense = this.byName.get(name);
    if (dense === undefined) {
      dense = { counts: new Float64Array(FIRST_KEYS), low: Infinity, high: -Infinity, total: 0 };
      this.byName.set(name, dense);
    }
    if (highestKey >= dense.counts.length) {
      const grown = new Float64Array(2 ** Math.ceil(Math.log2(highestKey + 1)));
      grown.set(dense.counts);
      dense.counts = grown;
    }
    return dense;
  }

  /** Counts `value` (count times) into histogram `name`. */
  addValue(name: string, value: number, count = 1): void {
    this.addKey(name, bucketKey(value), count);
  }

  /** Counts `count` into bucket `key` of histogram `name`: for counts kept by a key of their own (a weekday and hour). */
  addKey(name: string, key: number, count = 1): void {
    const dense = this.countsOf(name, key);
    dense.counts[key]! += count;
    dense.total += count;
    if (key < dense.low) dense.low = key;
    if (key > dense.high) dense.high = key;
  }

  /** Adds `sign` × the histograms encodeHistograms wrote as `bytes` (nothing for none), without decoding them. */
  addBytes(bytes: Uint8Array | null | undefined, sign: 1 | -1 = 1): void {
    const reader = new HistogramBytes(bytes ?? NO_BYTES);
    while (!reader.done) {
      const name = reader.name();
      const buckets = reader.buckets();
      if (buckets === 0) continue;
      // Keys ascend: the first is the lowest, and room is made as the keys pass the end. The highest is kept
      // at each bucket, so that clear() empties what bytes cut short added before their error.
      let key = reader.varint();
      let dense = this.countsOf(name, key);
      if (key < dense.low) dense.low = key;
      for (let left = buckets; ;) {
        if (key > dense.high) dense.high = key;
        const count = sign * reader.varint();
        dense.counts[key]! += count;
        dense.total += count;
        if (--left === 0) break;
        key += reader.varint();
        if (key >= dense.counts.length) dense = this.countsOf(name, key);
      }
    }
  }

  /** The buckets of histogram `name`'s sum with a count, as `[key, count]` in ascending key order. */
  buckets(name: string): [number, number][] {
    const dense = this.byName.get(name);
    const out: [number, number][] = [];
    if (dense === undefined) return out;
    for (let key = dense.low; key <= dense.high; key++)
      if (dense.counts[key] !== 0) out.push([key, dense.counts[key]!]);
    return out;
  }

  /** The names whose counts come to more than nothing. */
  names(): string[] {
    return [...this.byName].filter(([, dense]) => dense.total > 0).map(([name]) => name);
  }

  /**
   * The p-th percentiles of histogram `name`'s sum as Postgres's percentile_cont computes them (interpolated
   * between the two values around rank p·(n−1)), each of the two read back from its bucket: within RELATIVE_ERROR
   * of the exact answer, as both are and the interpolation keeps their weights. null with no values.
   */
  percentiles(name: string, ps: readonly number[]): (number | null)[] {
    const dense = this.byName.get(name);
    if (dense === undefined || dense.total <= 0) return ps.map(() => null);
    return ps.map((p) => {
      const rank = p * (dense.total - 1);
      const lower = Math.floor(rank);
      const [below, above] = valuesAtRanks(dense, lower);
      return rank === lower ? below : below + (rank - lower) * (above - below);
    });
  }
}

/**
 * The values at rank `rank` and the next, ranked from 0 up as sorted values are (the first key whose running count
 * passes the rank; past every key, the highest with a count), in one pass up the keys.
 */
function valuesAtRanks({ counts, low, high }: DenseCounts, rank: number): [number, number] {
  const values: number[] = [];
  let seen = 0;
  let highestCounted = low;
  for (let key = low; key <= high && values.length < 2; key++) {
    if (counts[key] === 0) continue;
    highestCounted = key;
    seen += counts[key]!;
    while (values.length < 2 && rank + values.length < seen) values.push(bucketValue(key));
  }
  while (values.length < 2) values.push(bucketValue(highestCounted));
  return values as [number, number];
}
