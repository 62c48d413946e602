// A report's session: its queries in one read-only snapshot, with the settings a report over a big history needs,
// and a second connection in the same snapshot for a read that can run beside the others.
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { ReportScope } from './report-scope.js';
import { withPostgresZones, type PostgresZoneNames, type ReportDb } from './report-zones.js';

/**
 * Runs `read` beside the report's next reads where it can: on a second pooled connection that sees the report's
 * snapshot (pg_export_snapshot, as pg_dump's parallel jobs share one), so that Postgres works on both at once.
 * Resolves once the read is under way, before the caller's next read is sent (one connection answers one statement
 * at a time); `answer` is the read's, to be awaited within the session. Where no second connection can be had (the
 * process's reads beside others at their limit, or none free in the pool within BESIDE_WAIT_MS), the read is queued
 * on the report's own connection instead: the same answer, after the reads before it.
 */
export type BesideRead = <T>(read: (db: ReportDb) => Promise<T>) => Promise<{ answer: Promise<T> }>;

/** How long a read beside the others waits for a pooled connection before it queues on the report's own. */
export const BESIDE_WAIT_MS = 1_000;

/**
 * How many second connections a process's reports hold at once: a report's second connection is optional, and
 * must not take the pool (10 connections) from the requests that need one.
 */
export const BESIDE_AT_ONCE = 2;

/** The second connections a process's reports hold (one per PrismaClient, so per pool), and how long one waits. */
export interface BesideBudget {
  take(): boolean;
  give(): void;
  waitMs: number;
}

export function createBesideBudget(atOnce = BESIDE_AT_ONCE, waitMs = BESIDE_WAIT_MS): BesideBudget {
  let held = 0;
  return {
    waitMs,
    take() {
      if (held >= atOnce) return false;
      held += 1;
      return true;
    },
    give() {
      held = Math.max(0, held - 1);
    },
  };
}

/** As SET TRANSACTION SNAPSHOT takes it: a literal, so checked before it is written into the statement. */
const SNAPSHOT_ID = /^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$/i;

/** The id pg_export_snapshot() answered (its first row's `id`), checked to be one; an error where it is not. */
export function exportedSnapshotId(rows: readonly { id: string }[]): string {
  const id = rows[0]?.id ?? '';
  if (!SNAPSHOT_ID.test(id)) throw new Error(`Postgres exported a snapshot named ${JSON.stringify(id)}`);
  return id;
}

const SESSION = {
  timeout: 120_000,
  isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead,
} as const;

/**
 * A plan for each call's own values (its range, its connections), for the rest of the transaction: a report's
 * statements are prepared (lib/prepared-statements.ts), and a generic plan Postgres kept after five calls would be
 * one for any range, a month's or ten years'. The retention run's stored days run the same statements (report-days.ts).
 */
export const PLAN_EACH_CALL = Prisma.sql`set_config('plan_cache_mode', 'force_custom_plan', true)`;

/**
 * A report transaction's settings, as one statement (SET LOCAL ends with the transaction, so the pooled connection
 * goes back unchanged).
 * - No JIT: Postgres guesses 100 rows for each jsonb_to_recordset and 1000 for each generate_series over a row's
 *   own values (sync-health's staleness), so a one-connection report of a few thousand rows is costed in the
 *   millions, past jit_above_cost, and then spends a second or more compiling for milliseconds of work.
 * - ISO DateStyle: a day read as text is 2026-03-01 (report-sql.ts, isoDay), whatever the server's default.
 * - Floats written exactly (extra_float_digits 1, Postgres's default, which a server may lower): the shortest text
 *   that reads back as the same number, as JavaScript writes it, so that a CSV Postgres writes (csv-rows.ts) has
 *   the figures a report read as rows does.
 */
export const REPORT_SETTINGS = Prisma.sql`
  SELECT set_config('work_mem', '64MB', true), set_config('jit', 'off', true),
         set_config('DateStyle', 'ISO', true), set_config('extra_float_digits', '1', true), ${PLAN_EACH_CALL}`;

async function setUpReportTransaction(tx: Prisma.TransactionClient): Promise<void> {
  await tx.$executeRaw`SET TRANSACTION READ ONLY`;
  await tx.$queryRaw(REPORT_SETTINGS);
}

/** `answer`, its failure handled until the caller awaits it (a failure before then is not an unhandled one). */
function answered<T>(answer: Promise<T>): { answer: Promise<T> } {
  answer.catch(() => undefined);
  return { answer };
}

/** A BesideRead that queues every read on `db` itself: outside a report session, or where none can be had. */
export const onTheSameConnection =
  (db: ReportDb): BesideRead =>
  async (read) =>
    answered(read(db));

function besideIn(prisma: PrismaClient, tx: Prisma.TransactionClient, budget: BesideBudget): BesideRead {
  return async (read) => {
    if (!budget.take()) return answered(read(tx));
    let id: string;
    try {
      id = exportedSnapshotId(await tx.$queryRaw<{ id: string }[]>`SELECT pg_export_snapshot() AS id`);
    } catch (error: unknown) {
      budget.give();
      throw error;
    }
    let started = false;
    const beside = prisma
      .$transaction(
        async (sibling) => {
          started = true;
          // Before any query of the transaction (the adapter's BEGIN and isolation level come first, as they must);
          // the exporting transaction stays open while the report awaits this read.
          await sibling.$executeRawUnsafe(`SET TRANSACTION SNAPSHOT '${id}'`);
          await setUpReportTransaction(sibling);
          return read(sibling);
        },
        { ...SESSION, maxWait: budget.waitMs },
      )
      .finally(() => budget.give());
    // No second connection in time (or none at all): the read is queued on the report's own. Once it began there,
    // its failure is the read's, and not run twice.
    return answered(
      beside.catch((error: unknown) => {
        if (started) throw error;
        return read(tx);
      }),
    );
  };
}

/**
 * Runs a report's queries in one read-only snapshot with more working memory and no JIT, on `scope` with zones
 * Postgres knows (withPostgresZones): grouping a million slot rows by slot or by day spills to disk at Postgres's
 * 4 MB default and then takes several times as long. `work` may run a read beside its others (BesideRead), within
 * `budget` (none given: every such read is queued on the report's connection).
 */
export function withReportSession<S extends ReportScope, T>(
  prisma: PrismaClient,
  knownZones: PostgresZoneNames,
  scope: S,
  work: (db: ReportDb, scope: S, beside: BesideRead) => Promise<T>,
  budget?: BesideBudget,
): Promise<T> {
  return prisma.$transaction(
    async (tx) => {
      await setUpReportTransaction(tx);
      const beside = budget ? besideIn(prisma, tx, budget) : onTheSameConnection(tx);
      return work(tx, await withPostgresZones(tx, scope, knownZones), beside);
    },
    // One snapshot for every query of a report: a report reads stored days and then the days after them
    // (sync-health-rows.ts), and a retention run committing between the two would otherwise skip a day or count
    // one twice. Read-only, so it never fails to serialize.
    { ...SESSION, maxWait: 10_000 },
  );
}
