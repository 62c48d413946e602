// sync-health's days stored once they are over, as running totals (issue 43): each row holds what a connection's
// runs came to from its first stored day through `day` (sync-health-figures.ts's figures: runs by outcome, calls,
// the last error, histograms of durations and staleness), so a report over any range reads two rows a connection,
// the total at its end less the one before its start (report-queries/sync-health-rows.ts). Written by the
// retention run with the other report days (report-days.ts), in its transaction.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import {
  addHistograms,
  decodeHistograms,
  encodeHistograms,
  histogramsLess,
  type Histograms,
} from '../lib/log-histogram.js';
import type { ReportScope } from './report-queries/report-scope.js';
import {
  histogramsOf,
  SYNC_HEALTH_COUNTS,
  syncHealthFigures,
  type SyncHealthCounts,
  type SyncHealthFigures,
} from './report-queries/sync-health-figures.js';

/** A connection's totals through a day, as stored. */
export interface SyncHealthTotals extends SyncHealthCounts {
  histograms: Histograms;
  lastError: string | null;
  lastErrorAt: Date | null;
}

/** The counts of `source` (figures, a stored row or totals), copied. */
function countsOf(source: SyncHealthCounts): SyncHealthCounts {
  // A loop over the names rather than Object.fromEntries: a report over every connection makes two a connection.
  const counts = {} as SyncHealthCounts;
  for (const count of SYNC_HEALTH_COUNTS) counts[count] = source[count];
  return counts;
}

const NO_COUNTS = Object.fromEntries(SYNC_HEALTH_COUNTS.map((count) => [count, 0])) as SyncHealthCounts;

export const emptyTotals = (): SyncHealthTotals => ({
  ...countsOf(NO_COUNTS),
  histograms: new Map(),
  lastError: null,
  lastErrorAt: null,
});

/** `into` plus `sign` × `from`'s counts and histograms, in place; the last error is the caller's. */
export function addTotals(
  into: SyncHealthTotals,
  from: SyncHealthTotals,
  sign: 1 | -1 = 1,
): SyncHealthTotals {
  for (const count of SYNC_HEALTH_COUNTS) into[count] += sign * from[count];
  addHistograms(into.histograms, from.histograms, sign);
  return into;
}

/** Counted figures (sync-health-figures.ts) as totals: what a day, or the days after the stored ones, adds. */
export function totalsOfFigures(figures: SyncHealthFigures): SyncHealthTotals {
  return {
    ...countsOf(figures),
    histograms: histogramsOf(figures),
    lastError: figures.last_error,
    lastErrorAt: figures.last_error_at === null ? null : new Date(figures.last_error_at),
  };
}

/** A stored row's columns, as StoredTotalsRow names them. */
export const TOTALS_COLUMN_NAMES = [
  ...SYNC_HEALTH_COUNTS,
  'histograms',
  'last_error',
  'last_error_at',
] as const;

/** A stored row's columns (alias h) as a report or the store reads them. */
export const TOTALS_COLUMNS = Prisma.raw(TOTALS_COLUMN_NAMES.map((column) => `h.${column}`).join(', '));

export interface StoredTotalsRow extends SyncHealthCounts {
  histograms: Uint8Array;
  last_error: string | null;
  last_error_at: Date | null;
}

export function totalsOf(row: StoredTotalsRow): SyncHealthTotals {
  return {
    ...countsOf(row),
    histograms: decodeHistograms(row.histograms),
    lastError: row.last_error,
    lastErrorAt: row.last_error_at === null ? null : new Date(row.last_error_at),
  };
}

/**
 * A range's totals from the stored rows around it: the one through its last day less the one before its first
 * (null where there is none), read without decoding either on its own. Its last error is the caller's to choose.
 */
export function totalsBetween(end: StoredTotalsRow | null, before: StoredTotalsRow | null): SyncHealthTotals {
  const counts = countsOf(end ?? NO_COUNTS);
  if (before) for (const count of SYNC_HEALTH_COUNTS) counts[count] -= before[count];
  return {
    ...counts,
    histograms: histogramsLess(end?.histograms, before?.histograms),
    lastError: null,
    lastErrorAt: null,
  };
}

/** A connection claimed by a run of report days, and the last day stored before it (null: none, or moved). */
export interface ClaimedConnection {
  id: string;
  previousThrough: string | null;
}

/**
 * Stores the running totals of `claimed`'s days after their previous ones through `through` (an SQL date over
 * alias `c`), before report_days_stored's sync_health_through moves on (report-days.ts does that after, in the same
 * transaction). A
 * connection with nothing stored before starts again from its first run. The number of rows stored.
 */
export async function storeSyncHealthDays(
  db: Pick<PrismaClient, '$queryRaw' | '$executeRaw'>,
  claimed: readonly ClaimedConnection[],
  scope: ReportScope,
  through: Prisma.Sql,
): Promise<number> {
  const ids = claimed.map(({ id }) => id);
  const fresh = claimed.filter(({ previousThrough }) => previousThrough === null).map(({ id }) => id);
  if (fresh.length > 0)
    await db.$executeRaw(Prisma.sql`DELETE FROM sync_health_day WHERE connection_id = ANY(${fresh}::uuid[])`);
  const latest = await db.$queryRaw<(StoredTotalsRow & { connection_id: string })[]>(Prisma.sql`
    SELECT DISTINCT ON (h.connection_id) h.connection_id::text AS connection_id, ${TOTALS_COLUMNS}
    FROM sync_health_day h WHERE h.connection_id = ANY(${ids}::uuid[])
    ORDER BY h.connection_id, h.day DESC`);
  const running = new Map(latest.map((row) => [row.connection_id, totalsOf(row)]));
  const days = await syncHealthFigures(
    db,
    { ...scope, connectionBatch: ids },
    { byDay: true, afterStored: true, through },
  );
  if (days.length === 0) return 0;
  const rows = days.map((figures) => {
    const totals = running.get(figures.connection_id) ?? emptyTotals();
    running.set(figures.connection_id, totals);
    const day = totalsOfFigures(figures);
    addTotals(totals, day);
    if (day.lastErrorAt !== null) {
      totals.lastError = day.lastError;
      totals.lastErrorAt = day.lastErrorAt;
    }
    // Encoded now: the histograms go on adding up for the connection's later days.
    return {
      connectionId: figures.connection_id,
      day: figures.day!,
      ...totals,
      histogramsHex: Buffer.from(encodeHistograms(totals.histograms)).toString('hex'),
    };
  });
  const column = <T>(pick: (row: (typeof rows)[number]) => T): T[] => rows.map(pick);
  await db.$executeRaw(Prisma.sql`
    INSERT INTO sync_health_day (connection_id, day, succeeded, failed, superseded, interrupted, attempts, calls,
                                 histograms, last_error, last_error_at)
    SELECT connection_id, day, succeeded, failed, superseded, interrupted, attempts, calls, decode(histograms, 'hex'),
           last_error, last_error_at
    FROM unnest(${column((r) => r.connectionId)}::uuid[], ${column((r) => r.day)}::date[],
                ${column((r) => r.succeeded)}::int[], ${column((r) => r.failed)}::int[],
                ${column((r) => r.superseded)}::int[], ${column((r) => r.interrupted)}::int[],
                ${column((r) => r.attempts)}::int[], ${column((r) => r.calls)}::float8[],
                ${column((r) => r.histogramsHex)}::text[],
                ${column((r) => r.lastError)}::text[], ${column((r) => r.lastErrorAt?.toISOString() ?? null)}::timestamptz[])
      AS t(connection_id, day, succeeded, failed, superseded, interrupted, attempts, calls, histograms, last_error,
           last_error_at)
    ON CONFLICT (connection_id, day) DO UPDATE SET succeeded = EXCLUDED.succeeded, failed = EXCLUDED.failed,
      superseded = EXCLUDED.superseded, interrupted = EXCLUDED.interrupted, attempts = EXCLUDED.attempts,
      calls = EXCLUDED.calls, histograms = EXCLUDED.histograms, last_error = EXCLUDED.last_error,
      last_error_at = EXCLUDED.last_error_at`);
  return rows.length;
}
