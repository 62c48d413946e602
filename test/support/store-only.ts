// Retention settings that pack and prune nothing, so that a retention run (store/retention.ts) only stores report
// days and counts days so far: what the report-day tests and benches time and check.
import type { RetentionSettings } from '../../src/store/retention.js';

export const storeOnly = (batchSize = 1000): RetentionSettings => ({
  syncRunDays: 0,
  closedSlotDays: 0,
  compactAfterDays: 0,
  batchSize,
});
