// An export over many connections read in parts at once, each part a run of consecutive connections in the report's
// order on a pooled connection of its own, all in one snapshot (pg_export_snapshot, as pg_dump's parallel jobs share
// one), and written out one part after the other: the same CSV, sooner. Postgres runs one statement on one core, and
// its own parallel query does not take availability's plan, which works out each connection's days through lateral
// lookups in the report's order (availability-days.ts): even with parallel costs set to nothing, it gathers only the
// scan of the connections beneath them. Split by connection, each part keeps that plan and that order, and the
// report's order is connection first, so the parts follow one another.
import type pg from 'pg';
import { Prisma } from '../../generated/prisma/client.js';
import { exportedSnapshotId, type BesideBudget } from './report-session.js';
import type { ReportScope } from './report-scope.js';
import { held, type HeldConnection } from '../held-connection.js';
import { connectionFilter, connectionName } from './report-sql.js';
import type { ZoneReader } from './report-zones.js';

export interface ExportParts {
  /** Parts read at once at most, the first on the export's own connection. */
  atOnce: number;
  /** Fewest connections a part holds: an export over fewer than twice this is read in one part. */
  fewestConnections: number;
  /**
   * Bytes a later part reads ahead of its turn at most, held in memory: Postgres goes on with it while the parts
   * before it are written out, and waits once the part holds as many of the socket's reads as would fill this at
   * 64 KiB each (csv-export.ts, readAhead: smaller reads hold less).
   */
  aheadBytes: number;
  /** The second connections the process's reports hold (report-session.ts): a part's connection is one of them. */
  budget: BesideBudget;
}

/**
 * Two parts at once: Postgres's own default for one parallel query is two processes
 * (max_parallel_workers_per_gather), which is what an export may take of a server that serves the daemon too. A part
 * of fewer than 500 connections is read in tens of milliseconds, less than a second connection's set-up is worth.
 * At most 64 MiB ahead: the second half of 10,000 connections' availability is 44 MB.
 */
export const DEFAULT_EXPORT_PARTS: Omit<ExportParts, 'budget'> = {
  atOnce: 2,
  fewestConnections: 500,
  aheadBytes: 64 * 1024 * 1024,
};

/**
 * The scope's connections in the report's order (by name, then id, as connectionsInOrder ranks them) and how many
 * parts they make; undefined where the export is read in one part: one connection asked for, a batch of them, or
 * too few for two parts.
 */
export async function connectionsToSplit(
  reader: ZoneReader,
  scope: ReportScope,
  parts: Pick<ExportParts, 'atOnce' | 'fewestConnections'>,
): Promise<{ ids: string[]; parts: number } | undefined> {
  if (scope.connectionId !== undefined || scope.connectionBatch !== undefined || parts.atOnce < 2) {
    return undefined;
  }
  const rows = await reader.$queryRaw<{ id: string }[]>(Prisma.sql`
    SELECT c.id::text AS id FROM connection c WHERE TRUE ${connectionFilter(scope, Prisma.sql`c.id`)}
    ORDER BY ${connectionName}, c.id`);
  const count = Math.min(parts.atOnce, Math.floor(rows.length / Math.max(1, parts.fewestConnections)));
  return count < 2 ? undefined : { ids: rows.map((row) => row.id), parts: count };
}

/** `ids` cut into `count` runs of consecutive ones, of about as many each. */
export function consecutiveRuns(ids: readonly string[], count: number): string[][] {
  return Array.from({ length: count }, (_, part) =>
    ids.slice(Math.round((part * ids.length) / count), Math.round(((part + 1) * ids.length) / count)),
  );
}

/** Exports the snapshot of `client`'s transaction, for other connections to read in (until it ends). */
export async function exportedSnapshot(client: pg.PoolClient): Promise<string> {
  return exportedSnapshotId((await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id')).rows);
}

/** A connection taken from the pool within `waitMs`, or undefined; one that comes later goes straight back. */
async function connectedWithin(pool: pg.Pool, waitMs: number): Promise<pg.PoolClient | undefined> {
  const connecting = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), waitMs);
  });
  const client = await Promise.race([connecting, late]).finally(() => clearTimeout(timer));
  if (client === undefined) {
    connecting.then(
      (arrived) => arrived.release(),
      () => undefined,
    );
  }
  return client;
}

/**
 * Second connections for the later parts, each in a read-only transaction in `snapshot` with the reports'
 * `settings`: as many as the budget gives and the pool has within its wait, up to `wanted`. Each holds one of the
 * budget's until it is released; a connection that fails to set up is closed and not counted.
 */
export async function partConnections(
  pool: pg.Pool,
  budget: BesideBudget,
  snapshot: string,
  settings: Prisma.Sql,
  wanted: number,
): Promise<HeldConnection[]> {
  const connections: HeldConnection[] = [];
  while (connections.length < wanted && budget.take()) {
    const client = await connectedWithin(pool, budget.waitMs).catch(() => undefined);
    if (client === undefined) {
      budget.give();
      break;
    }
    const part = held(client, () => budget.give());
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      await client.query(`SET TRANSACTION SNAPSHOT '${snapshot}'`);
      await client.query(settings.text, settings.values as unknown[]);
    } catch {
      // A part fewer: the export reads the connections in the parts it has.
      part.release(true);
      break;
    }
    connections.push(part);
  }
  return connections;
}
