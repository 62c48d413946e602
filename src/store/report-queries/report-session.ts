// A report's session: its queries in one read-only snapshot, with the settings a report over a big history needs,
// and a second connection in the same snapshot for a read that can run beside the others.
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { databaseUnavailableReason } from '../database-errors.js';
import type { ReportScope } from './report-scope.js';
import { withPostgresZones, type PostgresZoneNames, type ReportDb } from './report-zones.js';

/**
 * Runs `read` beside the report's next reads, on a second pooled connection that sees the report's snapshot
 * (pg_export_snapshot, as pg_dump's parallel jobs share one), so that Postgres works on both at once. Resolves once
 * the snapshot is exported, before the caller's next read is sent (one connection answers one statement at a
 * time); `answer` is the read's. With no connection free within BESIDE_WAIT_MS, the read runs on the report's own
 * connection after the others: the same answer, later.
 */
export type BesideRead = <T>(read: (db: ReportDb) => Promise<T>) => Promise<{ answer: Promise<T> }>;

/** How long a read beside the others waits for a pooled connection before it queues behind them instead. */
export const BESIDE_WAIT_MS = 1_000;

/** As SET TRANSACTION SNAPSHOT takes it: a literal, so checked before it is written into the statement. */
const SNAPSHOT_ID = /^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$/i;

const SESSION = {
  timeout: 120_000,
  isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead,
} as const;

/** A report transaction's settings (SET LOCAL ends with it, so the pooled connection goes back unchanged). */
async function setUpReportTransaction(tx: Prisma.TransactionClient): Promise<void> {
  await tx.$executeRaw`SET TRANSACTION READ ONLY`;
  await tx.$executeRaw`SET LOCAL work_mem = '64MB'`;
  // No JIT: Postgres guesses 100 rows for each jsonb_to_recordset and 1000 for each generate_series over a row's
  // own values (sync-health's staleness), so a one-connection report of a few thousand rows is costed in the
  // millions, past jit_above_cost, and then spends a second or more compiling for milliseconds of work.
  await tx.$executeRaw`SET LOCAL jit = off`;
}

function besideIn(prisma: PrismaClient, tx: Prisma.TransactionClient): BesideRead {
  return async (read) => {
    const [exported] = await tx.$queryRaw<{ id: string }[]>`SELECT pg_export_snapshot() AS id`;
    const id = exported?.id ?? '';
    if (!SNAPSHOT_ID.test(id)) throw new Error(`Postgres exported a snapshot named ${JSON.stringify(id)}`);
    const beside = prisma.$transaction(
      async (sibling) => {
        // First in the transaction, before any query; the exporting one stays open while the report runs.
        await sibling.$executeRawUnsafe(`SET TRANSACTION SNAPSHOT '${id}'`);
        await setUpReportTransaction(sibling);
        return read(sibling);
      },
      { ...SESSION, maxWait: BESIDE_WAIT_MS },
    );
    const answer = beside.catch((error: unknown) => {
      if (databaseUnavailableReason(error) === 'pool_timeout') return read(tx);
      throw error;
    });
    // Awaited by the caller; until then a failure is not unhandled.
    answer.catch(() => undefined);
    return { answer };
  };
}

/**
 * Runs a report's queries in one read-only snapshot with more working memory and no JIT, on `scope` with zones
 * Postgres knows (withPostgresZones): grouping a million slot rows by slot or by day spills to disk at Postgres's
 * 4 MB default and then takes several times as long. `work` may run a read beside its others (BesideRead).
 */
export function withReportSession<S extends ReportScope, T>(
  prisma: PrismaClient,
  knownZones: PostgresZoneNames,
  scope: S,
  work: (db: ReportDb, scope: S, beside: BesideRead) => Promise<T>,
): Promise<T> {
  return prisma.$transaction(
    async (tx) => {
      await setUpReportTransaction(tx);
      return work(tx, await withPostgresZones(tx, scope, knownZones), besideIn(prisma, tx));
    },
    // One snapshot for every query of a report: a report reads stored days and then the days after them
    // (sync-health-rows.ts), and a retention run committing between the two would otherwise skip a day or count
    // one twice. Read-only, so it never fails to serialize.
    { ...SESSION, maxWait: 10_000 },
  );
}
