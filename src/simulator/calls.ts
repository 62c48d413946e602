// Counts every request that reached an endpoint, faulted or not, so tests can assert how hard a client hits us.
import type { CallArrival, CallCounts } from './types.js';

/** Arrival times are for rate checks over a test's span; a long-running simulator keeps only the latest. */
const MAX_ARRIVALS = 100_000;

export interface CallCounter {
  record(endpoint: string, userId: string | null): void;
  totals(): CallCounts;
  byUser(): Record<string, CallCounts>;
  arrivals(): CallArrival[];
  reset(): void;
}

export function createCallCounter(nowMs: () => number = Date.now): CallCounter {
  let totals: CallCounts = {};
  let perUser: Record<string, CallCounts> = {};
  let arrivals: CallArrival[] = [];
  return {
    record(endpoint, userId) {
      totals[endpoint] = (totals[endpoint] ?? 0) + 1;
      arrivals.push({ endpoint, atMs: nowMs() });
      if (arrivals.length > MAX_ARRIVALS) arrivals = arrivals.slice(-MAX_ARRIVALS / 2);
      if (userId === null) return;
      const counts = (perUser[userId] ??= {});
      counts[endpoint] = (counts[endpoint] ?? 0) + 1;
    },
    totals: () => ({ ...totals }),
    byUser: () => Object.fromEntries(Object.entries(perUser).map(([id, counts]) => [id, { ...counts }])),
    arrivals: () => arrivals.map((a) => ({ ...a })),
    reset() {
      totals = {};
      perUser = {};
      arrivals = [];
    },
  };
}
