// Row writes as Postgres's statistics count them (pg_stat_user_tables), for a benchmark's own database.
import type { SyncHarness } from '../support/sync-harness.js';

/** Row writes (inserted, updated, deleted tuples) by table, as Postgres's statistics count them. */
export async function rowWritesByTable(h: Pick<SyncHarness, 'db'>): Promise<Map<string, number>> {
  const result = await h.db.sql.query<{ relname: string; writes: string }>(
    'SELECT relname, n_tup_ins + n_tup_upd + n_tup_del AS writes FROM pg_stat_user_tables',
  );
  return new Map(result.rows.map((row) => [row.relname, Number(row.writes)]));
}

export function rowWritesBetween(
  before: Map<string, number>,
  after: Map<string, number>,
  tables?: (name: string) => boolean,
): number {
  let writes = 0;
  for (const [table, n] of after) if (!tables || tables(table)) writes += n - (before.get(table) ?? 0);
  return writes;
}

/** Postgres publishes a busy backend's counts at most once a second, an idle one's within 10 s: wait that out. */
export const settlePostgresStatistics = () => new Promise((resolve) => setTimeout(resolve, 11_000));
