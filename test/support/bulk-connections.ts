// Connection rows in bulk, as the scheduler's tick finds them, for the tick bench (a million) and the test that
// holds the tick query's plan (tens of thousands): `INSERT … SELECT generate_series`, no sync, no upstream. Each
// row is a synced connection with what a tick reads (band state for every band, pull coverage) and sealed tokens
// of an envelope's length (what makes a row as wide as a real one). Its next_sync_at is spread evenly over
// `spreadMs` after `base` by a multiplicative hash of its number, so rows added later interleave with earlier
// ones and the instant a tick runs at decides how many are due (instantWithDue).
import pg from 'pg';
import { dueConnectionsQuery, type DuePageCursor } from '../../src/store/due-connections.js';

export interface BulkConnections {
  /** Row numbers [from, to): rows of one call never collide with another's. */
  from: number;
  to: number;
  /** The configured bands' names: each row's band state has them all, due 5 minutes apart from next_sync_at. */
  bandNames: readonly string[];
  base: Date;
  spreadMs: number;
}

/** Inserts the rows and ANALYZEs the table, as autovacuum would after such a load. */
export async function insertBulkConnections(sql: pg.Pool, rows: BulkConnections): Promise<void> {
  const bandState = rows.bandNames
    .map(
      (name, i) =>
        `${pg.escapeLiteral(name)}, jsonb_build_object('dueAt', pg_temp.iso(next + make_interval(secs => ${i * 300})), ` +
        `'factor', 1, 'calls', ${2 + i})`,
    )
    .join(', ');
  // One session: pg_temp is its own.
  const client = await sql.connect();
  try {
    await client.query(`
      CREATE OR REPLACE FUNCTION pg_temp.iso(t timestamptz) RETURNS text LANGUAGE sql STABLE AS
        $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$`);
    await client.query(
      `INSERT INTO connection (id, upstream_user_id, email, display_name, timezone, access_token_sealed,
         refresh_token_sealed, access_expires_at, scope, next_sync_at, band_state, pull_coverage, last_sync_at,
         last_sync_outcome, last_good_sync_at, first_synced_at, pull_sequence, committed_pull_sequence)
       SELECT gen_random_uuid(), 'bulk-' || n, 'user' || n || '@example.test', 'User ' || n, 'Europe/Berlin',
         sealed, sealed, base + interval '1 hour', 'read', next,
         jsonb_build_object(${bandState}),
         jsonb_build_object('eventTypesPulledAt', pg_temp.iso(next - interval '10 minutes'), 'slotStarts',
           jsonb_build_array(
             jsonb_build_object('until', pg_temp.iso(base + interval '2 days'),
               'pulledAt', pg_temp.iso(next - interval '4 minutes')),
             jsonb_build_object('until', null, 'pulledAt', pg_temp.iso(next - interval '2 hours')))),
         next - interval '4 minutes', 'succeeded', next - interval '4 minutes', base - interval '30 days', 40, 40
       FROM generate_series($1::int, $2::int - 1) AS n,
         LATERAL (SELECT $3::timestamptz AS base) AS b,
         LATERAL (SELECT $3::timestamptz + make_interval(secs => ((n::bigint * 2654435761) % $4::bigint) / 1000.0)
           AS next) AS t,
         LATERAL (SELECT 'k1.' || encode(decode(md5(n::text) || md5((n + 1)::text) || md5((n + 2)::text) ||
           md5((n + 3)::text), 'hex'), 'base64') AS sealed) AS s`,
      [rows.from, rows.to, rows.base, rows.spreadMs],
    );
  } finally {
    client.release();
  }
  await sql.query('ANALYZE connection');
}

/** The instant at which exactly `k` connections are due: the k-th earliest next_sync_at. */
export async function instantWithDue(sql: pg.Pool, k: number): Promise<Date> {
  const { rows } = await sql.query<{ at: Date }>(
    `SELECT next_sync_at AS at FROM connection ORDER BY next_sync_at OFFSET $1::int - 1 LIMIT 1`,
    [k],
  );
  return rows[0]!.at;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Plan Rows': number;
  'Actual Rows'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

export interface DueQueryPlan {
  /** Every node of the plan, outermost first, e.g. ['Limit', 'Index Scan']. */
  nodeTypes: string[];
  /** The node that reads the connection table. */
  scan: { nodeType: string; indexName?: string; indexCond?: string };
  /** Rows the planner expected that node to return, and those it did. */
  estimatedRows: number;
  rowsRead: number;
  /** Buffers that node touched (hit or read). */
  blocks: number;
  executionMs: number;
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** EXPLAIN ANALYZE of the tick's query exactly as the store runs it, with these parameters. */
export async function explainDueQuery(
  sql: pg.Pool,
  now: Date,
  limit: number,
  after?: DuePageCursor,
): Promise<DueQueryPlan> {
  const query = dueConnectionsQuery(now, limit, after);
  const { rows } = await sql.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query.text}`,
    query.values,
  );
  const [{ Plan: plan, 'Execution Time': executionMs }] = rows[0]!['QUERY PLAN'];
  const nodes = nodesOf(plan);
  const scan = nodes.find((node) => node['Relation Name'] === 'connection');
  if (!scan) throw new Error(`no node of the plan reads connection: ${JSON.stringify(plan)}`);
  return {
    nodeTypes: nodes.map((node) => node['Node Type']),
    scan: {
      nodeType: scan['Node Type'],
      ...(scan['Index Name'] ? { indexName: scan['Index Name'] } : {}),
      ...(scan['Index Cond'] ? { indexCond: scan['Index Cond'] } : {}),
    },
    estimatedRows: scan['Plan Rows'],
    rowsRead: scan['Actual Rows'] ?? NaN,
    blocks: (scan['Shared Hit Blocks'] ?? 0) + (scan['Shared Read Blocks'] ?? 0),
    executionMs,
  };
}
