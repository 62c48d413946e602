// History in the form reports read. Once a UTC day is RETENTION_COMPACT_AFTER_DAYS over, the slots that closed
// on it and the sync runs that started on it leave their tables for one row per connection and day
// (slot_history by the day a slot starts, sync_run_history: parallel arrays of what the reports read, ms
// offsets from the day's midnight), and superseded overview
// versions, which nothing reads, go. A slot or run row costs ~250–600 bytes with its indexes; packed, its
// figures cost a few dozen before TOAST compresses them (docs/performance.md, growth). Lossless for the reports:
// every report reads both forms (store/report-queries/history-records.ts), and
// test/reports/compact-history.test.ts runs each over one history kept both ways.
// The packing itself is two SQL functions of the compact_history migration (the migration moved the history
// already there with them): one definition for both. A batch packs a few connections, in its own transaction.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { forgetDaysSoFar } from './sync-health-so-far.js';
import { ADD_TO_SYNC_RUN_DAILY, INSERT_INTO_SYNC_RUN_DAILY } from './sync-run-daily.js';

const DAY_MS = 86_400_000;

/**
 * The UTC midnight by which `days` days are over: today's for 1 (yesterday is over), yesterday's for 2. What
 * closed (slots) or started (runs) before it is packed.
 */
export function compactionCutoff(now: Date, days: number): Date {
  const midnight = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return new Date(midnight - (days - 1) * DAY_MS);
}

/** Connections per batch, for RETENTION_BATCH_SIZE rows: a connection's day is a few hundred rows. */
export const connectionsPerBatch = (batchSize: number): number => Math.max(1, Math.round(batchSize / 100));

export interface CompactionBatch {
  /** The last connection id the batch packed: the next batch starts after it; null when none were left. */
  lastConnectionId: string | null;
  slots: number;
  syncRuns: number;
  overviews: number;
}

/**
 * The next `count` connections after `afterId`, by id. Ordered by the column, not by the text it is selected as:
 * the primary key's index gives them in order and stops at `count`, where a sort of the text read every connection
 * after `afterId` at each batch (a pass's cost growing with the square of the connections).
 */
export const connectionsAfter = (afterId: string | null, count: number) => Prisma.sql`
  SELECT c.id::text AS id FROM connection c
  WHERE ${afterId}::uuid IS NULL OR c.id > ${afterId}::uuid
  ORDER BY c.id LIMIT ${count}`;

/** Packs the history before `cutoff` of the connections after `afterId` (by id), `connections` of them. */
export async function compactHistoryBatch(
  prisma: PrismaClient,
  cutoff: Date,
  afterId: string | null,
  connections: number,
): Promise<CompactionBatch> {
  return prisma.$transaction(async (tx) => {
    const ids = (await tx.$queryRaw<{ id: string }[]>(connectionsAfter(afterId, connections))).map(
      (row) => row.id,
    );
    if (ids.length === 0) return { lastConnectionId: null, slots: 0, syncRuns: 0, overviews: 0 };
    const [moved] = await tx.$queryRaw<{ slots: number; runs: number }[]>`
      SELECT slotfeed_pack_slots(${cutoff}::timestamptz, ${ids}::uuid[]) AS slots,
             slotfeed_pack_sync_runs(${cutoff}::timestamptz, ${ids}::uuid[]) AS runs`;
    // The runs packed leave sync_run, where a day so far (sync-health-so-far.ts) tells the runs its snapshot did
    // not see: the connections whose packed days this transaction wrote are counted again.
    if ((moved?.runs ?? 0) > 0)
      await tx.$executeRaw(
        forgetDaysSoFar(Prisma.sql`ARRAY(
          SELECT h.connection_id FROM sync_run_history h
          WHERE h.connection_id = ANY(${ids}::uuid[]) AND h.xmin = pg_current_xact_id()::xid)`),
      );
    const overviews = await tx.$executeRaw`
      DELETE FROM overview WHERE connection_id = ANY(${ids}::uuid[]) AND valid_to < ${cutoff}`;
    return {
      lastConnectionId: ids[ids.length - 1] ?? null,
      slots: moved?.slots ?? 0,
      syncRuns: moved?.runs ?? 0,
      overviews,
    };
  });
}

/**
 * One batch of packed sync-run days whose whole day is before `cutoff`: rolled up into sync_run_daily (runs,
 * calls, seconds per outcome), then deleted. The number of days.
 */
export async function rollUpPackedRunBatch(
  prisma: PrismaClient,
  cutoff: Date,
  batchSize: number,
): Promise<number> {
  return prisma.$transaction(async (tx) => {
    const [result] = await tx.$queryRaw<{ days: number }[]>`
      WITH doomed AS (
        SELECT connection_id, day FROM sync_run_history
        WHERE day < (${cutoff}::timestamptz AT TIME ZONE 'UTC')::date
        ORDER BY day LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM sync_run_history h USING doomed d
        WHERE h.connection_id = d.connection_id AND h.day = d.day
        RETURNING h.connection_id, h.day, h.outcome, h.upstream_calls, h.duration_ms
      ), rolled AS (
        ${INSERT_INTO_SYNC_RUN_DAILY}
        -- The enum's values once (an InitPlan), not a pg_enum search per run.
        SELECT g.connection_id, g.day, (SELECT enum_range(NULL::sync_outcome))[u.outcome], COUNT(*)::int, SUM(u.calls)::bigint,
               COALESCE(SUM(u.ms::numeric / 1000), 0)::float8
        FROM gone g CROSS JOIN LATERAL unnest(g.outcome, g.upstream_calls, g.duration_ms) AS u(outcome, calls, ms)
        GROUP BY 1, 2, 3
        ${ADD_TO_SYNC_RUN_DAILY}
        RETURNING 1
      ), forgotten AS (${forgetDaysSoFar(Prisma.sql`ARRAY(SELECT DISTINCT connection_id FROM gone)`)})
      SELECT (SELECT COUNT(*) FROM gone)::int AS days`;
    return result?.days ?? 0;
  });
}

/** One batch of packed slot days whose last close is before `cutoff`, deleted. The number of days. */
export async function prunePackedSlotBatch(
  prisma: PrismaClient,
  cutoff: Date,
  batchSize: number,
): Promise<number> {
  return prisma.$executeRaw`
    DELETE FROM slot_history h USING (
      SELECT connection_id, day FROM slot_history WHERE gone_until < ${cutoff}
      ORDER BY gone_until LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
    ) d
    WHERE h.connection_id = d.connection_id AND h.day = d.day`;
}
