// `slotfeed migrate --status`: what applying would do, without doing it. Read-only: it neither creates the
// history table nor takes the migration lock, so it can run while another process migrates. It logs nothing: the
// command prints its answer on stdout, where a log line before it would read as part of it.
import { readLocalMigrations } from './local-migrations.js';
import { planMigrations } from './migration-plan.js';
import { withMigrationConnection } from './migration-connection.js';
import { migrationsTableExists, readMigrationRows } from './migrations-table.js';
import { resolvedOptions, type MigrationRunnerOptions } from './runner-options.js';

export interface MigrationStatus {
  /** Local migrations the database has applied, in order. */
  applied: string[];
  /** Local migrations a run would apply, in order. */
  pending: string[];
  /** Applied migrations whose file changed since (a run refuses). */
  modified: string[];
  /** Migrations with an unresolved failed attempt (a run refuses). */
  failed: string[];
  /** Migrations the database applied that have no local folder (a run refuses). */
  missingLocally: string[];
}

export async function migrationStatus(options: MigrationRunnerOptions): Promise<MigrationStatus> {
  const o = resolvedOptions(options);
  const local = await readLocalMigrations(o.migrationsDir);
  return withMigrationConnection(o.databaseUrl, o.logger, async (client) => {
    const rows = (await migrationsTableExists(client)) ? await readMigrationRows(client) : [];
    const plan = planMigrations(local, rows);
    return {
      applied: plan.alreadyApplied,
      pending: plan.pending.map((m) => m.name),
      modified: plan.modified,
      failed: [...new Set(plan.failed.map((row) => row.migrationName))],
      missingLocally: plan.missingLocally,
    };
  });
}
