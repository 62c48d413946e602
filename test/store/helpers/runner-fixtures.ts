// Small shared pieces of the migration-runner tests.
import { readdirSync } from 'node:fs';
import type pg from 'pg';
import type { MigrationLogger } from '../../../src/store/migrations/index.js';
import { MigrationError } from '../../../src/store/migrations/index.js';
import { MIGRATIONS_DIR } from '../../support/db.js';

/** The fixed instant the runner's clock is pinned to, so recorded timestamps are exact. */
export const T0 = new Date('2026-03-02T09:00:00Z');

/** The real migrations' names, read independently of the runner. */
export const REAL_MIGRATIONS = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

export interface HistoryRow {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
  applied_steps_count: number;
}

export async function historyRows(sql: pg.Pool): Promise<HistoryRow[]> {
  const result = await sql.query<HistoryRow>(
    'SELECT * FROM _prisma_migrations ORDER BY started_at, migration_name',
  );
  return result.rows;
}

export async function tableExists(sql: pg.Pool, table: string): Promise<boolean> {
  const result = await sql.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [table]);
  return result.rows[0]?.found != null;
}

/** Resolves with the MigrationError `promise` rejects with; fails the test if it resolves or throws otherwise. */
export async function migrationErrorOf(promise: Promise<unknown>): Promise<MigrationError> {
  try {
    await promise;
  } catch (thrown: unknown) {
    if (thrown instanceof MigrationError) return thrown;
    throw thrown;
  }
  throw new Error('expected the runner to refuse, but it succeeded');
}

/** A logger that keeps every line, serialised, to search for what must never appear. */
export function recordingLogger(): MigrationLogger & { lines: string[] } {
  const lines: string[] = [];
  const record = (obj: object, msg?: string) => void lines.push(JSON.stringify({ ...obj, msg }));
  return { lines, info: record, warn: record };
}
