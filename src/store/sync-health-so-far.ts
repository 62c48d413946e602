// sync-health's day so far (issue 43). A report up to now reads each connection's stored running totals
// (sync-health-days.ts) and then counts every run since its last stored day: about a day of them, 3.4 million runs
// for 10,000 connections at the default bands, ~20 s. The retention run (hourly) keeps what those runs came to as
// of a snapshot, so that a report counts only the runs that snapshot did not see: those started since, and those
// whose sync was still committing (a commit can begin minutes after its run started, so no clock tells them
// apart; the transaction that wrote each run does: sync_run.recorded_xid against the snapshot).
//
// A day so far holds while its connection's stored days and zone are the ones it was counted after. Packing or
// pruning a connection's runs (history-compaction.ts, retention.ts) moves runs it counted out of sync_run, so it
// makes the connection's day so far not hold, in the same transaction; a connection without one that holds is
// counted run by run until the next retention run counts it again.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { lastStoredDay, soFarHolds, syncHealthFigures } from './report-queries/sync-health-figures.js';
import { PLAN_EACH_CALL } from './report-queries/report-session.js';
import type { ReportScope } from './report-queries/report-scope.js';
import { at, connectionFilter } from './report-queries/report-sql.js';
import { STORED_ZONE } from './report-queries/stored-days.js';
import {
  addDayTotals,
  emptyTotals,
  encodedTotals,
  TOTALS_COLUMN_LIST,
  TOTALS_COLUMNS,
  TOTALS_UPDATES,
  TOTALS_VALUES,
  totalsArrays,
  totalsOf,
  totalsOfFigures,
  type StoredTotalsRow,
} from './sync-health-days.js';
import type { ReportDb } from './report-queries/report-zones.js';

type Db = ReportDb & Pick<PrismaClient, '$executeRaw' | '$transaction'>;

/**
 * The days so far of the connections whose runs `changed` (an SQL uuid[]) moved or went, made not to hold (no stored
 * days they count after) rather than deleted: the next count updates the row, where a new row's key check on the
 * connection would fail to serialize against any sync committing meanwhile.
 */
export const forgetDaysSoFar = (changed: Prisma.Sql) =>
  Prisma.sql`UPDATE sync_health_so_far SET stored_through = NULL WHERE connection_id = ANY(${changed})`;

interface Counted extends StoredTotalsRow {
  id: string;
  zone: string;
  stored_through: string;
  holds: boolean;
}

/**
 * Counts the day so far of the next `connections` connections after `afterId` (by id) with sync-health's days
 * stored, as of `scope.at`: a connection whose day so far holds adds only the runs its snapshot did not see, the
 * others count every run after their stored days. One transaction of one snapshot, which the rows record.
 */
export async function countDaysSoFar(
  db: Db,
  scope: ReportScope,
  afterId: string | null,
  connections: number,
): Promise<{ lastConnectionId: string | null; counted: number }> {
  return db.$transaction(
    async (tx) => {
      // The reports' own statements, planned for each batch's connections (a generic plan, which Postgres keeps
      // after five calls of a prepared statement, read all of today's runs for each batch: 0.9 s a batch of 1,000
      // connections became 78 s), and without JIT, as a report's are (report-session.ts).
      const [{ snapshot } = { snapshot: '' }] = await tx.$queryRaw<{ snapshot: string }[]>(
        Prisma.sql`SELECT pg_current_snapshot()::text AS snapshot, ${PLAN_EACH_CALL}, set_config('jit', 'off', true)`,
      );
      const listed = await tx.$queryRaw<Counted[]>(Prisma.sql`
        SELECT c.id::text AS id, ${STORED_ZONE} AS zone, (${lastStoredDay(scope)})::text AS stored_through,
               ${soFarHolds(scope)} AS holds, ${TOTALS_COLUMNS}
        FROM connection c
        JOIN report_days_stored s
          ON s.connection_id = c.id AND s.zone = ${STORED_ZONE} AND s.sync_health_through IS NOT NULL
        LEFT JOIN sync_health_so_far h ON h.connection_id = c.id
        WHERE (${afterId}::uuid IS NULL OR c.id > ${afterId}::uuid) ${connectionFilter(scope, Prisma.sql`c.id`)}
        ORDER BY c.id LIMIT ${connections}`);
      if (listed.length === 0) return { lastConnectionId: null, counted: 0 };
      const held = listed.filter((row) => row.holds).map((row) => row.id);
      const afresh = listed.filter((row) => !row.holds).map((row) => row.id);
      const unseen =
        held.length === 0
          ? []
          : await syncHealthFigures(
              tx,
              { ...scope, connectionBatch: held },
              { byDay: false, afterStored: true, unseen: true },
            );
      const every =
        afresh.length === 0
          ? []
          : await syncHealthFigures(
              tx,
              { ...scope, connectionBatch: afresh },
              { byDay: false, afterStored: true },
            );
      const figures = new Map([...unseen, ...every].map((row) => [row.connection_id, row]));
      const rows = listed.map((row) => {
        const totals = row.holds ? totalsOf(row) : emptyTotals();
        const since = figures.get(row.id);
        return { row, totals: encodedTotals(since ? addDayTotals(totals, totalsOfFigures(since)) : totals) };
      });
      await tx.$executeRaw(Prisma.sql`
        INSERT INTO sync_health_so_far
          (connection_id, zone, stored_through, counted_at, snapshot, ${TOTALS_COLUMN_LIST})
        SELECT connection_id, zone, stored_through, ${at(scope)}, ${snapshot}, ${TOTALS_VALUES}
        FROM unnest(${rows.map(({ row }) => row.id)}::uuid[], ${rows.map(({ row }) => row.zone)}::text[],
                    ${rows.map(({ row }) => row.stored_through)}::date[], ${totalsArrays(rows.map((r) => r.totals))})
          AS t(connection_id, zone, stored_through, ${TOTALS_COLUMN_LIST})
        ON CONFLICT (connection_id) DO UPDATE SET zone = EXCLUDED.zone, stored_through = EXCLUDED.stored_through,
          counted_at = EXCLUDED.counted_at, snapshot = EXCLUDED.snapshot, ${TOTALS_UPDATES}`);
      return { lastConnectionId: listed[listed.length - 1]!.id, counted: rows.length };
    },
    // One snapshot for the listing, the runs counted and the one recorded. A connection counted afresh reads up to
    // a day and an hour of runs (~450 at the default bands).
    { maxWait: 10_000, timeout: 120_000, isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
  );
}
