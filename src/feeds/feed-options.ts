// A feed's options, stored as JSON on its row. Strict: an unknown key is a mistake (a typo in the CLI or the
// admin form), not something to carry along silently.
import { z } from 'zod';

export const feedOptionsSchema = z.strictObject({
  /** Days shown from the start of today in the account's zone; a leap year's worth at most. */
  days: z.number().int().min(1).max(366).optional(),
  /** Join adjacent or overlapping slots of one event type into one block. */
  merge: z.boolean().optional(),
});

export type FeedOptions = { days?: number; merge?: boolean };

/**
 * A canonical key for render caches: equal for options that render alike (`{}` and `{ merge: false }`).
 * An unset day range reads "d-": callers that want the configured default in the key pass resolved options,
 * e.g. `{ ...options, days: options.days ?? defaultDays }`.
 */
export function feedOptionsKey(o: FeedOptions): string {
  return `d${o.days ?? '-'};m${o.merge ? 1 : 0}`;
}

/** Only the keys that are set, so a stored row and the default feed's `{}` compare equal. */
export function normalizeFeedOptions(o: FeedOptions): FeedOptions {
  return {
    ...(o.days !== undefined ? { days: o.days } : {}),
    ...(o.merge !== undefined ? { merge: o.merge } : {}),
  };
}
