// sync-health's days stored once they are over, as running totals (issue 43): each row holds what a connection's
// runs came to from its first stored day through `day` (sync-health-figures.ts's figures: runs by outcome, calls,
// the last error, histograms of durations and staleness), so a report over any range reads two rows a connection,
// the total at its end less the one before its start (report-queries/sync-health-rows.ts). Written by the
// retention run with the other report days (report-days.ts), in its transaction.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { addHistograms, decodeHistograms, encodeHistograms, type Histograms } from '../lib/log-histogram.js';
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
function addTotals(into: SyncHealthTotals, from: SyncHealthTotals, sign: 1 | -1 = 1): SyncHealthTotals {
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
    addDayTotals(totals, totalsOfFigures(figures));
    // Encoded now: the histograms go on adding up for the connection's later days.
    return { connectionId: figures.connection_id, day: figures.day!, totals: encodedTotals(totals) };
  });
  await db.$executeRaw(Prisma.sql`
    INSERT INTO sync_health_day (connection_id, day, ${TOTALS_COLUMN_LIST})
    SELECT connection_id, day, ${TOTALS_VALUES}
    FROM unnest(${rows.map((r) => r.connectionId)}::uuid[], ${rows.map((r) => r.day)}::date[],
                ${totalsArrays(rows.map((r) => r.totals))})
      AS t(connection_id, day, ${TOTALS_COLUMN_LIST})
    ON CONFLICT (connection_id, day) DO UPDATE SET ${TOTALS_UPDATES}`);
  return rows.length;
}

/**
 * `totals` plus what more runs (`later`) came to, in place, with the later of the two last errors: runs a day so far
 * did not see may have started before the ones it counted (sync-health-so-far.ts).
 */
export function addDayTotals(totals: SyncHealthTotals, later: SyncHealthTotals): SyncHealthTotals {
  addTotals(totals, later);
  if (
    later.lastErrorAt !== null &&
    (totals.lastErrorAt === null || later.lastErrorAt >= totals.lastErrorAt)
  ) {
    totals.lastError = later.lastError;
    totals.lastErrorAt = later.lastErrorAt;
  }
  return totals;
}

/** Totals as a statement writes them: their histograms encoded (encodeHistograms) as hex. */
export interface EncodedTotals extends SyncHealthCounts {
  histogramsHex: string;
  lastError: string | null;
  lastErrorAt: Date | null;
}

export const encodedTotals = (totals: SyncHealthTotals): EncodedTotals => ({
  ...countsOf(totals),
  histogramsHex: Buffer.from(encodeHistograms(totals.histograms)).toString('hex'),
  lastError: totals.lastError,
  lastErrorAt: totals.lastErrorAt,
});

/** TOTALS_COLUMN_NAMES as a column list, for a statement writing a stored row. */
export const TOTALS_COLUMN_LIST = Prisma.raw(TOTALS_COLUMN_NAMES.join(', '));
/** The values of unnest's columns (totalsArrays, named by TOTALS_COLUMN_LIST) as the stored row holds them. */
export const TOTALS_VALUES = Prisma.raw(
  TOTALS_COLUMN_NAMES.map((column) => (column === 'histograms' ? `decode(histograms, 'hex')` : column)).join(
    ', ',
  ),
);
/** ON CONFLICT's update of every totals column. */
export const TOTALS_UPDATES = Prisma.raw(
  TOTALS_COLUMN_NAMES.map((column) => `${column} = EXCLUDED.${column}`).join(', '),
);

/** Rows of totals as unnest's arguments, one array a column in TOTALS_COLUMN_NAMES' order. */
export function totalsArrays(rows: readonly EncodedTotals[]): Prisma.Sql {
  const counts = SYNC_HEALTH_COUNTS.map((count) =>
    count === 'calls'
      ? Prisma.sql`${rows.map((r) => r.calls)}::float8[]`
      : Prisma.sql`${rows.map((r) => r[count])}::int[]`,
  );
  return Prisma.join([
    ...counts,
    Prisma.sql`${rows.map((r) => r.histogramsHex)}::text[]`,
    Prisma.sql`${rows.map((r) => r.lastError)}::text[]`,
    Prisma.sql`${rows.map((r) => r.lastErrorAt?.toISOString() ?? null)}::timestamptz[]`,
  ]);
}
