// Counts every request that reached an endpoint, faulted or not, so tests can assert how hard a client hits us.
import type { CallCounts } from './types.js';

export interface CallCounter {
  record(endpoint: string, userId: string | null): void;
  totals(): CallCounts;
  byUser(): Record<string, CallCounts>;
  reset(): void;
}

export function createCallCounter(): CallCounter {
  let totals: CallCounts = {};
  let perUser: Record<string, CallCounts> = {};
  return {
    record(endpoint, userId) {
      totals[endpoint] = (totals[endpoint] ?? 0) + 1;
      if (userId === null) return;
      const counts = (perUser[userId] ??= {});
      counts[endpoint] = (counts[endpoint] ?? 0) + 1;
    },
    totals: () => ({ ...totals }),
    byUser: () => Object.fromEntries(Object.entries(perUser).map(([id, counts]) => [id, { ...counts }])),
    reset() {
      totals = {};
      perUser = {};
    },
  };
}
