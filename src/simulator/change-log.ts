// When each change to someone's bookable time happened, on the simulator's clock: the ground truth slotfeed's
// freshness is measured against (staleness = when slotfeed stored a change − when it happened here).
import type { SimChange } from './types.js';

/** A long-running simulator (the demo) keeps only the latest changes. */
const MAX_CHANGES = 200_000;

export interface ChangeLog {
  record(change: SimChange): void;
  /** Oldest first. */
  list(): SimChange[];
}

/** `restored`: an earlier log's list(), for a world kept in a state file. */
export function createChangeLog(restored: readonly SimChange[] = []): ChangeLog {
  let changes: SimChange[] = restored.map((change) => ({ ...change }));
  return {
    record(change) {
      changes.push(change);
      if (changes.length > MAX_CHANGES) changes = changes.slice(-MAX_CHANGES / 2);
    },
    list: () => changes.map((change) => ({ ...change })),
  };
}
