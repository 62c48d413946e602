// `_prisma_migrations`, read and written exactly as Prisma Migrate does (prisma-engines:
// sql-schema-connector/src/flavour/postgres.rs for the DDL, sql_migration_persistence.rs for the rows), so
// `prisma migrate status` / `deploy` / `resolve` run by an operator see the same history we do.
import type { ClientBase } from 'pg';

// Verbatim from Prisma, unqualified: the table lives in the connection's current schema, as Prisma's does.
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);
`;

export interface MigrationRow {
  id: string;
  checksum: string;
  migrationName: string;
  startedAt: Date;
  /** Set when the migration completed successfully; null while running or after a failure. */
  finishedAt: Date | null;
  /** Set by `prisma migrate resolve --rolled-back` (or markMigrationRolledBack): the attempt no longer counts. */
  rolledBackAt: Date | null;
  logs: string | null;
  appliedStepsCount: number;
}

interface RawMigrationRow {
  id: string;
  checksum: string;
  migration_name: string;
  started_at: Date;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  logs: string | null;
  applied_steps_count: number;
}

export async function migrationsTableExists(db: ClientBase): Promise<boolean> {
  const result = await db.query<{ exists: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relname = '_prisma_migrations' AND c.relkind = 'r'
     ) AS "exists"`,
  );
  return result.rows[0]?.exists === true;
}

/** Ordinary tables of the current schema other than the migrations table, as Prisma's emptiness check sees them. */
export async function otherTableNames(db: ClientBase): Promise<string[]> {
  const result = await db.query<{ relname: string }>(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname <> '_prisma_migrations'
     ORDER BY c.relname`,
  );
  return result.rows.map((row) => row.relname);
}

export async function createMigrationsTable(db: ClientBase): Promise<void> {
  await db.query(CREATE_MIGRATIONS_TABLE);
}

/** All attempts, oldest first (Prisma's order). */
export async function readMigrationRows(db: ClientBase): Promise<MigrationRow[]> {
  const result = await db.query<RawMigrationRow>(
    `SELECT id, checksum, migration_name, started_at, finished_at, rolled_back_at, logs, applied_steps_count
     FROM _prisma_migrations ORDER BY started_at ASC`,
  );
  return result.rows.map((row) => ({
    id: row.id,
    checksum: row.checksum,
    migrationName: row.migration_name,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    rolledBackAt: row.rolled_back_at,
    logs: row.logs,
    appliedStepsCount: row.applied_steps_count,
  }));
}

interface StartedMigration {
  id: string;
  checksum: string;
  migrationName: string;
  startedAt: Date;
}

/** Prisma's record_migration_started: logs, finished_at and rolled_back_at NULL, applied_steps_count 0. */
export async function insertStartedRow(db: ClientBase, row: StartedMigration): Promise<void> {
  await db.query(
    `INSERT INTO _prisma_migrations (id, checksum, started_at, migration_name) VALUES ($1, $2, $3, $4)`,
    [row.id, row.checksum, row.startedAt, row.migrationName],
  );
}

/** Prisma's record_successful_step followed by record_migration_finished (one script = one step). */
export async function markRowFinished(db: ClientBase, id: string, finishedAt: Date): Promise<void> {
  await db.query(
    `UPDATE _prisma_migrations SET applied_steps_count = applied_steps_count + 1, finished_at = $2 WHERE id = $1`,
    [id, finishedAt],
  );
}

/** The row Prisma leaves after a failed script: started, never finished, `logs` holding the error. */
export async function insertFailedRow(
  db: ClientBase,
  row: StartedMigration & { logs: string },
): Promise<void> {
  await db.query(
    `INSERT INTO _prisma_migrations (id, checksum, started_at, migration_name, logs) VALUES ($1, $2, $3, $4, $5)`,
    [row.id, row.checksum, row.startedAt, row.migrationName, row.logs],
  );
}

/** Prisma's mark_migration_rolled_back_by_id, for every unresolved failed attempt of one migration. */
export async function markFailedRowsRolledBack(
  db: ClientBase,
  migrationName: string,
  at: Date,
): Promise<number> {
  const result = await db.query(
    `UPDATE _prisma_migrations SET rolled_back_at = $2
     WHERE migration_name = $1 AND finished_at IS NULL AND rolled_back_at IS NULL`,
    [migrationName, at],
  );
  return result.rowCount ?? 0;
}
