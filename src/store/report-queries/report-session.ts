// A report's session: its queries in one read-only snapshot, with the settings a report over a big history needs.
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { ReportScope } from './report-scope.js';
import { withPostgresZones, type PostgresZoneNames, type ReportDb } from './report-zones.js';

/**
 * Runs a report's queries in one read-only snapshot with more working memory and no JIT, on `scope` with zones Postgres
 * knows (withPostgresZones): grouping a million slot rows by slot or by day spills to disk at Postgres's 4 MB
 * default and then takes several times as long. SET LOCAL ends with the transaction, so the pooled connection
 * goes back unchanged.
 */
export function withReportSession<S extends ReportScope, T>(
  prisma: PrismaClient,
  knownZones: PostgresZoneNames,
  scope: S,
  work: (db: ReportDb, scope: S) => Promise<T>,
): Promise<T> {
  return prisma.$transaction(
    async (tx) => {
      await tx.$executeRaw`SET TRANSACTION READ ONLY`;
      await tx.$executeRaw`SET LOCAL work_mem = '64MB'`;
      // No JIT: Postgres guesses 100 rows for each jsonb_to_recordset and 1000 for each generate_series over a
      // row's own values (sync-health's staleness), so a one-connection report of a few thousand rows is costed
      // in the millions, past jit_above_cost, and then spends a second or more compiling for milliseconds of work.
      await tx.$executeRaw`SET LOCAL jit = off`;
      return work(tx, await withPostgresZones(tx, scope, knownZones));
    },
    // One snapshot for every query of a report: a report reads stored days and then the days after them
    // (sync-health-rows.ts), and a retention run committing between the two would otherwise skip a day or count
    // one twice. Read-only, so it never fails to serialize.
    { maxWait: 10_000, timeout: 120_000, isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
  );
}
