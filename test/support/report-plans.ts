// Reports explained exactly as the store runs them: each query a report's read sends is run as EXPLAIN (ANALYZE,
// BUFFERS) in the report session (its settings, JIT off, included), and the plans come back instead of rows. The
// plan tests hold a report's cost on what it reads (rows visited, buffers), never on its time.
import type { Prisma } from '../../src/generated/prisma/client.js';
import type { ReportQuery } from '../../src/reports/report-query.js';
import { withReportSession } from '../../src/store/report-queries/report-session.js';
import { postgresZoneNames, type ReportDb } from '../../src/store/report-queries/report-zones.js';
import type { TestDatabase } from './db.js';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
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

/** Every query `read` sends for `query`, explained (ANALYZE, BUFFERS) in the report session as the store runs it. */
export async function explainReport<Scope>(
  prisma: TestDatabase['prisma'],
  query: ReportQuery,
  read: (db: ReportDb, scope: Scope) => Promise<unknown>,
): Promise<ExplainedQuery[]> {
  const explained: ExplainedQuery[] = [];
  const explaining = (tx: ReportDb): ReportDb => ({
    $queryRaw: (async (sql: Prisma.Sql) => {
      const rows = await (tx as unknown as TestDatabase['prisma']).$queryRawUnsafe<
        { 'QUERY PLAN': unknown }[]
      >(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql.text}`, ...sql.values);
      explained.push(...(rows[0]!['QUERY PLAN'] as ExplainedQuery[]));
      return [];
    }) as ReportDb['$queryRaw'],
  });
  await withReportSession(prisma, postgresZoneNames(), query, (tx, scope) =>
    read(explaining(tx), scope as Scope),
  );
  return explained;
}

/**
 * Buffers the scans of `table` and of its indexes (named `<table>_…`) touched themselves, summed over the nodes: a
 * node's counts include its children's, so each is taken less theirs (a bitmap heap scan less its index scan).
 */
export function blocksTouched(nodes: readonly PlanNode[], table: string): number {
  const blocks = (node: PlanNode) => node['Shared Hit Blocks'] + node['Shared Read Blocks'];
  return nodes
    .filter(
      (node) => node['Relation Name'] === table || (node['Index Name']?.startsWith(`${table}_`) ?? false),
    )
    .reduce(
      (sum, node) => sum + blocks(node) - (node.Plans ?? []).reduce((own, child) => own + blocks(child), 0),
      0,
    );
}
