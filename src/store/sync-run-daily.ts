// sync_run_daily keeps what reports need of sync runs past their retention: per connection, UTC day and outcome,
// the runs, calls and seconds. Two paths add to it (retention.ts from runs kept row by row, history-compaction.ts
// from packed run days), and a day can arrive from both: each adds its sums to what the row holds.
import { Prisma } from '../generated/prisma/client.js';

/** The INSERT's head: rows of (connection_id, day, outcome, runs, upstream_calls, seconds) follow it. */
export const INSERT_INTO_SYNC_RUN_DAILY = Prisma.sql`
  INSERT INTO sync_run_daily (connection_id, day, outcome, runs, upstream_calls, seconds)`;

/** The INSERT's tail: a day already rolled up gets these sums added, never replaced. */
export const ADD_TO_SYNC_RUN_DAILY = Prisma.sql`
  ON CONFLICT (connection_id, day, outcome) DO UPDATE SET
    runs = sync_run_daily.runs + EXCLUDED.runs,
    upstream_calls = sync_run_daily.upstream_calls + EXCLUDED.upstream_calls,
    seconds = sync_run_daily.seconds + EXCLUDED.seconds`;
