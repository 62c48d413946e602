// History that does not grow without bound. First the days that are over are packed into the form reports read
// (store/history-compaction.ts); then sync runs and closed slots older than their configured ages are
// deleted, in either form, a batch at a time (each batch its own short transaction, a pause between batches), so pruning never
// holds locks a sync or a feed waits for: it touches no open slot and no running sync's row.
// Before runs go, what the reports need of them is kept: each pruned run is added to sync_run_daily (per
// connection, UTC day and outcome: runs, upstream calls, seconds; sync-health counts pruned days from it),
// and the connection's first successful sync is in connection.first_synced_at. Closed slots carry nothing a
// report over the retained range reads: a slot that closed before the range's start was not open at any
// instant in it.
// Between the packing and the pruning, each connection's days that are over are stored as the reports read them
// (store/report-days.ts) and kept for good, like bookings; last, what each connection's runs since came to is
// counted as of a snapshot (store/sync-health-so-far.ts), so that a report up to now counts only the runs after
// it. Storing a connection's days takes a key-share lock on its row for one short transaction (its rows' key
// checks), skipping a connection whose row a sync's commit holds;
// a sync that starts committing meanwhile waits for that transaction (milliseconds a day; about a second for a
// year of history at once).
// Deleting closed slots changes no feed (feeds show open slots), so the batches say so to the feed-version
// triggers (slotfeed.moves_feed_version), which would otherwise move every pruned connection's feed version.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { ADD_TO_SYNC_RUN_DAILY, INSERT_INTO_SYNC_RUN_DAILY } from './sync-run-daily.js';
import { countDaysSoFar, forgetDaysSoFar } from './sync-health-so-far.js';
import { isSerializationFailure } from './database-errors.js';
import {
  compactHistoryBatch,
  compactionCutoff,
  connectionsPerBatch,
  prunePackedSlotBatch,
  rollUpPackedRunBatch,
} from './history-compaction.js';
import {
  beginReportDayPass,
  storeReportDayBatch,
  type ReportDayFailure,
  type ReportDayPass,
} from './report-days.js';

export interface RetentionSettings {
  /** Sync runs that started this many days ago or earlier are pruned; 0 keeps them all. */
  syncRunDays: number;
  /** Slots that closed this many days ago or earlier are pruned; 0 keeps them all. */
  closedSlotDays: number;
  /**
   * Closed slots and finished runs of UTC days this many days over are packed, one row per connection and day
   * (store/history-compaction.ts); 0 keeps them row by row. Absent: 0.
   */
  compactAfterDays?: number;
  /** Rows per batch. */
  batchSize: number;
}

export interface PruneResult {
  syncRuns: number;
  closedSlots: number;
  /** Packed days (connection and day) past their age: runs rolled up into sync_run_daily, slots deleted. */
  syncRunDays: number;
  closedSlotDays: number;
  /** Stored availability days past the closed slots' age (report-queries/availability-days.ts). */
  availabilityDays: number;
  /** Rows packed into their day's row, and superseded overview versions deleted, by the compaction. */
  packedSlots: number;
  packedSyncRuns: number;
  overviewVersions: number;
  /** Report days (utilization's, the bookings report's, availability's…) stored now that they are over (store/report-days.ts). */
  reportDaysStored: number;
  /** Connections whose report days could not be stored this run (each passed to onReportDayFailure). */
  reportDayFailures: number;
  /** Connections whose sync-health day so far was counted (store/sync-health-so-far.ts). */
  daysSoFarCounted: number;
  batches: number;
}

const DAY_MS = 86_400_000;
const ageCutoff = (now: Date, days: number) => new Date(now.getTime() - days * DAY_MS);

/** One batch of sync runs: rolled up, then deleted, in one transaction. The number deleted. */
async function pruneSyncRunBatch(prisma: PrismaClient, cutoff: Date, batchSize: number): Promise<number> {
  return prisma.$transaction(async (tx) => {
    const [result] = await tx.$queryRaw<{ pruned: number }[]>`
      WITH doomed AS (
        SELECT id FROM sync_run
        WHERE started_at < ${cutoff} AND finished_at IS NOT NULL
        ORDER BY started_at LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM sync_run r USING doomed d WHERE r.id = d.id
        RETURNING r.connection_id, r.started_at, r.finished_at, r.outcome, r.upstream_calls
      ), rolled AS (
        ${INSERT_INTO_SYNC_RUN_DAILY}
        SELECT connection_id, (started_at AT TIME ZONE 'UTC')::date, outcome, COUNT(*)::int,
               SUM(upstream_calls)::bigint, SUM(EXTRACT(EPOCH FROM (finished_at - started_at)))::float8
        FROM gone GROUP BY 1, 2, 3
        ${ADD_TO_SYNC_RUN_DAILY}
        RETURNING 1
      ), forgotten AS (${forgetDaysSoFar(Prisma.sql`ARRAY(SELECT DISTINCT connection_id FROM gone)`)})
      SELECT (SELECT COUNT(*) FROM gone)::int AS pruned`;
    return result?.pruned ?? 0;
  });
}

async function pruneClosedSlotBatch(prisma: PrismaClient, cutoff: Date, batchSize: number): Promise<number> {
  return prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT set_config('slotfeed.moves_feed_version', 'on', true)`;
    return tx.$executeRaw`
      DELETE FROM slot WHERE id IN (
        SELECT id FROM slot WHERE gone_at < ${cutoff} ORDER BY gone_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
      )`;
  });
}

/**
 * One batch of stored availability days (report-queries/availability-days.ts) past the closed slots' age, deleted once
 * no slot they were counted from is kept: all their slots started before `cutoff` (a local day's start before the
 * second UTC midnight after its date), and neither the live nor the packed slots still hold one of the UTC days
 * either side of it (a slot closed long after it started, or never, as a connection that stopped syncing leaves its
 * slots, is kept, and the report from the slots would still count it).
 */
async function pruneAvailabilityDayBatch(
  prisma: PrismaClient,
  cutoff: Date,
  batchSize: number,
): Promise<number> {
  const [pruned] = await prisma.$queryRaw<{ days: number }[]>`
    WITH gone AS (
      DELETE FROM availability_day a USING (
        SELECT connection_id, day, upstream_event_id FROM availability_day o
        WHERE day <= (${cutoff}::timestamptz AT TIME ZONE 'UTC')::date - 2
          AND NOT EXISTS (
            SELECT 1 FROM slot_history h WHERE h.connection_id = o.connection_id AND h.day BETWEEN o.day - 1 AND o.day + 1)
          AND NOT EXISTS (
            SELECT 1 FROM slot s
            WHERE s.connection_id = o.connection_id AND s.upstream_event_id = o.upstream_event_id
              AND s.starts_at >= (o.day - 1)::timestamp AT TIME ZONE 'UTC'
              AND s.starts_at < (o.day + 2)::timestamp AT TIME ZONE 'UTC')
        ORDER BY day LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
      ) d
      WHERE a.connection_id = d.connection_id AND a.day = d.day AND a.upstream_event_id = d.upstream_event_id
      RETURNING a.connection_id, a.day, a.upstream_event_id
    ), closings AS (
      DELETE FROM availability_day_closing k USING gone g
      WHERE k.connection_id = g.connection_id AND k.day = g.day AND k.upstream_event_id = g.upstream_event_id
    )
    SELECT COUNT(*)::int AS days FROM gone`;
  return pruned?.days ?? 0;
}

type Pause = () => Promise<void>;

export interface PruneOptions {
  now: Date;
  pause?: Pause;
  signal?: AbortSignal;
  /** Told of each connection whose report days could not be stored this run (the next run tries again). */
  onReportDayFailure?: (failure: ReportDayFailure) => void;
}
interface PassOptions {
  pause: Pause;
  signal?: AbortSignal | undefined;
  onReportDayFailure?: ((failure: ReportDayFailure) => void) | undefined;
}

/** Runs `batch` until it comes back short or the signal aborts; the rows it did, and how many batches. */
async function batchesUntilDone(
  batch: () => Promise<number>,
  batchSize: number,
  options: PassOptions,
): Promise<{ rows: number; batches: number }> {
  let rows = 0;
  let batches = 0;
  for (;;) {
    if (options.signal?.aborted) break;
    const done = await batch();
    rows += done;
    if (done === 0) break;
    batches += 1;
    if (done < batchSize) break;
    await options.pause();
  }
  return { rows, batches };
}

/** Packs the history of days `days` over, a few connections a batch, every connection once. */
async function compactAll(
  prisma: PrismaClient,
  days: number,
  settings: RetentionSettings,
  now: Date,
  options: PassOptions,
  result: PruneResult,
): Promise<void> {
  const cutoff = compactionCutoff(now, days);
  let after: string | null = null;
  while (!options.signal?.aborted) {
    const batch = await compactHistoryBatch(prisma, cutoff, after, connectionsPerBatch(settings.batchSize));
    if (batch.lastConnectionId === null) return;
    after = batch.lastConnectionId;
    result.packedSlots += batch.slots;
    result.packedSyncRuns += batch.syncRuns;
    result.overviewVersions += batch.overviews;
    result.batches += 1;
    await options.pause();
  }
}

/** Stores the report days that are over (store/report-days.ts), a few connections a batch. */
async function storeAllReportDays(
  prisma: PrismaClient,
  pass: ReportDayPass,
  settings: RetentionSettings,
  now: Date,
  options: PassOptions,
  result: PruneResult,
): Promise<void> {
  let after: string | null = null;
  while (!options.signal?.aborted) {
    const batch = await storeReportDayBatch(
      prisma,
      pass,
      now,
      after,
      connectionsPerBatch(settings.batchSize),
    );
    if (batch.lastConnectionId === null) return;
    after = batch.lastConnectionId;
    result.reportDayFailures += batch.failures.length;
    for (const failure of batch.failures) options.onReportDayFailure?.(failure);
    // A batch whose connections were all up to date only read: neither counted nor paused after.
    if (batch.rows === 0) continue;
    result.reportDaysStored += batch.rows;
    result.batches += 1;
    await options.pause();
  }
}

/**
 * `count` done again when it fails to serialize, up to three times: a connection counted for the first time gets a
 * new row, whose key check on the connection fails when a sync of it commits during the batch (a REPEATABLE READ
 * transaction; store/sync-health-so-far.ts).
 */
async function countedWithRetries<T>(count: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await count();
    } catch (error: unknown) {
      if (attempt >= 3 || !isSerializationFailure(error)) throw error;
    }
  }
}

/**
 * Counts every connection's sync-health day so far (store/sync-health-so-far.ts), RETENTION_BATCH_SIZE connections a
 * batch, after the days stored: the runs since them.
 */
async function countAllDaysSoFar(
  prisma: PrismaClient,
  pass: ReportDayPass,
  settings: RetentionSettings,
  options: PassOptions,
  result: PruneResult,
): Promise<void> {
  let after: string | null = null;
  while (!options.signal?.aborted) {
    // A connection a row: a day so far that holds reads only the runs since the last count (about an hour's, 18 at
    // the default bands), where other passes' connections carry a day's history each.
    const batch = await countedWithRetries(() =>
      countDaysSoFar(prisma, pass.zones.scope, after, settings.batchSize),
    );
    if (batch.lastConnectionId === null) return;
    after = batch.lastConnectionId;
    result.daysSoFarCounted += batch.counted;
    result.batches += 1;
    await options.pause();
  }
}

/**
 * Packs the days that are over and stores the reports' figures of them, then prunes everything past its age, batch after batch, pausing between
 * batches; stops early when `signal` aborts (a shutdown, or the pruning lock lost).
 */
export async function pruneHistory(
  prisma: PrismaClient,
  settings: RetentionSettings,
  options: PruneOptions,
): Promise<PruneResult> {
  const passOptions: PassOptions = {
    pause: options.pause ?? (() => new Promise<void>((resolve) => setTimeout(resolve, 50))),
    signal: options.signal,
    onReportDayFailure: options.onReportDayFailure,
  };
  const result: PruneResult = {
    syncRuns: 0,
    closedSlots: 0,
    syncRunDays: 0,
    closedSlotDays: 0,
    availabilityDays: 0,
    packedSlots: 0,
    packedSyncRuns: 0,
    overviewVersions: 0,
    reportDaysStored: 0,
    reportDayFailures: 0,
    daysSoFarCounted: 0,
    batches: 0,
  };
  const compactAfterDays = settings.compactAfterDays ?? 0;
  if (compactAfterDays > 0)
    await compactAll(prisma, compactAfterDays, settings, options.now, passOptions, result);
  const reportDays = await beginReportDayPass(prisma, options.now);
  await storeAllReportDays(prisma, reportDays, settings, options.now, passOptions, result);
  const { batchSize } = settings;
  const passes: [keyof PruneResult, number, (cutoff: Date) => Promise<number>][] = [
    ['syncRuns', settings.syncRunDays, (c) => pruneSyncRunBatch(prisma, c, batchSize)],
    // Packed runs go in whole UTC days: those of days over by the cutoff's midnight.
    ['syncRunDays', settings.syncRunDays, (c) => rollUpPackedRunBatch(prisma, c, batchSize)],
    ['closedSlots', settings.closedSlotDays, (c) => pruneClosedSlotBatch(prisma, c, batchSize)],
    ['closedSlotDays', settings.closedSlotDays, (c) => prunePackedSlotBatch(prisma, c, batchSize)],
    ['availabilityDays', settings.closedSlotDays, (c) => pruneAvailabilityDayBatch(prisma, c, batchSize)],
  ];
  for (const [kind, days, batch] of passes) {
    if (days <= 0) continue;
    const cutoff = ageCutoff(options.now, days);
    const done = await batchesUntilDone(() => batch(cutoff), batchSize, passOptions);
    result[kind] += done.rows;
    result.batches += done.batches;
  }
  // Last, so that what packing and pruning moved is counted again before the next hour's reports.
  await countAllDaysSoFar(prisma, reportDays, settings, passOptions, result);
  return result;
}

export interface RetentionStore {
  /** Prunes everything past its age (pruneHistory). */
  prune(settings: RetentionSettings, options: PruneOptions): Promise<PruneResult>;
}

export function createRetentionStore(prisma: PrismaClient): RetentionStore {
  return { prune: (settings, options) => pruneHistory(prisma, settings, options) };
}
