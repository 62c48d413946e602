// Reports explained exactly as the store runs them: each query a report's read sends is run as EXPLAIN (ANALYZE,
// BUFFERS) in the report session (its settings, JIT off, included), and the plans come back instead of rows. The
// plan tests hold a report's cost on what it reads (rows visited, buffers), never on its time.
import { setTimeout } from 'node:timers/promises';
import { escapeIdentifier } from 'pg';
import type { Prisma } from '../../src/generated/prisma/client.js';
import type { ReportQuery } from '../../src/reports/report-query.js';
import { withReportSession } from '../../src/store/report-queries/report-session.js';
import { postgresZoneNames, type ReportDb } from '../../src/store/report-queries/report-zones.js';
import type { TestDatabase } from './db.js';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  /** An index scan's condition, as Postgres prints it. */
  'Index Cond'?: string;
  /** Rows an index-only scan read from the table all the same (a page not yet all-visible). */
  'Heap Fetches'?: number;
  /** The rows Postgres expected the node to return, from its statistics: what its plan was chosen on. */
  'Plan Rows': number;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  /** An InitPlan's name, with the parameter it returns: "InitPlan 7 (returns $18)". */
  'Subplan Name'?: string;
  'Recheck Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

export interface ExplainedQuery {
  Plan: PlanNode;
  JIT?: unknown;
}

/** A node and every node under it. */
export function flattenPlan(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flattenPlan)];
}

/** Rows the scans of `table` looked at, summed over the nodes: what they returned and what filters dropped. */
export function rowsVisited(nodes: readonly PlanNode[], table: string): number {
  return nodes
    .filter((node) => node['Relation Name'] === table)
    .reduce(
      (sum, node) =>
        sum +
        (node['Actual Rows'] +
          (node['Rows Removed by Filter'] ?? 0) +
          (node['Rows Removed by Index Recheck'] ?? 0)) *
          node['Actual Loops'],
      0,
    );
}

/**
 * Every query `read` sends for `query`, explained (ANALYZE, BUFFERS) in the report session as the store runs it.
 * Each answers no rows, unless `answered`: then each is run again for its rows, so that a read that builds its next
 * statement from what one answered (stored-days.ts, withUnstoredFrom) builds it as it would.
 */
export async function explainReport<Scope>(
  prisma: TestDatabase['prisma'],
  query: ReportQuery,
  read: (db: ReportDb, scope: Scope) => Promise<unknown>,
  { answered = false }: { answered?: boolean } = {},
): Promise<ExplainedQuery[]> {
  const explained: ExplainedQuery[] = [];
  const explaining = (tx: ReportDb): ReportDb => ({
    $queryRaw: (async (sql: Prisma.Sql) => {
      const rows = await (tx as unknown as TestDatabase['prisma']).$queryRawUnsafe<
        { 'QUERY PLAN': unknown }[]
      >(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql.text}`, ...sql.values);
      explained.push(...(rows[0]!['QUERY PLAN'] as ExplainedQuery[]));
      return answered ? tx.$queryRaw(sql) : [];
    }) as ReportDb['$queryRaw'],
  });
  await withReportSession(prisma, postgresZoneNames(), query, (tx, scope) =>
    read(explaining(tx), scope as Scope),
  );
  return explained;
}

/**
 * Buffers the scans of `table` (under `root`) touched themselves, its index scans included: a node's counts include
 * its children's, so each is taken less theirs, and a bitmap index scan, which names its index only, is counted
 * with the bitmap heap scan of `table` above it. An InitPlan runs when its value is first needed, and its buffers
 * count in the node that first needs it: a scan whose condition takes its bound from one (`$18`) is taken less
 * that InitPlan's, wherever it stands in the plan.
 */
export function blocksTouched(root: PlanNode, table: string): number {
  const blocks = (of: PlanNode) => of['Shared Hit Blocks'] + of['Shared Read Blocks'];
  // By how conditions name what they return: "$18" (Postgres 16 and before: "InitPlan 7 (returns $18)"), or the
  // InitPlan itself (17: "(InitPlan 1).col1").
  const initPlans = new Map<string, PlanNode>();
  for (const node of flattenPlan(root)) {
    const name = /^InitPlan \d+/.exec(node['Subplan Name'] ?? '')?.[0];
    if (name === undefined) continue;
    initPlans.set(`(${name})`, node);
    const returned = /\(returns (.+)\)$/.exec(node['Subplan Name'] ?? '')?.[1];
    for (const param of returned?.split(',') ?? []) initPlans.set(param.trim(), node);
  }
  // Each taken off once, at the first scan of the table that names it, children first: a bitmap index scan names it
  // as its heap scan does, and its blocks are in the heap scan's count as well as its own.
  const takenOff = new Set<PlanNode>();
  const initPlansUsed = (node: PlanNode) => {
    const conditions = [node['Index Cond'], node['Recheck Cond'], node.Filter].join(' ');
    const named = [...conditions.matchAll(/\$\d+|\(InitPlan \d+\)/g)].map(([name]) => initPlans.get(name));
    let sum = 0;
    for (const plan of new Set(named)) {
      // Those under the node itself are taken off with its children.
      if (plan === undefined || takenOff.has(plan) || node.Plans?.includes(plan)) continue;
      takenOff.add(plan);
      sum += blocks(plan);
    }
    return sum;
  };
  const touched = (node: PlanNode, underTable: boolean): number => {
    const ofTable =
      node['Relation Name'] === table || (underTable && node['Node Type'] === 'Bitmap Index Scan');
    const children = node.Plans ?? [];
    const below = children.reduce((sum, child) => sum + touched(child, ofTable), 0);
    if (!ofTable) return below;
    const own = blocks(node) - children.reduce((sum, child) => sum + blocks(child), 0) - initPlansUsed(node);
    return Math.max(0, own) + below;
  };
  return touched(root, false);
}

/**
 * VACUUM ANALYZE, then VACUUM again until every page of `tables` is marked all-visible: the share of a table an
 * index-only scan's plan is costed on (pg_class.relallvisible). A transaction of the same database that took its
 * snapshot before the rows were written (autovacuum's ANALYZE of another table, on a loaded CI machine) keeps VACUUM
 * from marking their pages, and the planner then reads them through the table instead; it ends, so this waits for it.
 */
export async function vacuumUntilAllVisible(db: TestDatabase, tables: readonly string[]): Promise<void> {
  await db.sql.query('VACUUM ANALYZE');
  for (;;) {
    const { rows } = await db.sql.query<{ relname: string }>(
      `SELECT relname FROM pg_class WHERE relname = ANY($1) AND relkind = 'r' AND relallvisible < relpages`,
      [tables],
    );
    if (rows.length === 0) return;
    await setTimeout(50);
    await db.sql.query(`VACUUM ${rows.map(({ relname }) => escapeIdentifier(relname)).join(', ')}`);
  }
}
