// `slotfeed migrate`: the equivalent of `prisma migrate deploy`, row for row in `_prisma_migrations`, with one
// deliberate difference: each migration's script and its history row commit in one transaction. Prisma sends
// the script on its own and records the row around it in separate statements, so a crash in between, or a
// script that commits part-way (its own BEGIN/COMMIT), leaves schema and history disagreeing, and on Postgres
// someone must then repair a half-applied migration by hand before anything else deploys. Here a migration is
// applied and recorded, or it left the schema exactly as it was.
import { randomUUID } from 'node:crypto';
import type { ClientBase } from 'pg';
import { acquireMigrationLock, releaseMigrationLock, MIGRATION_LOCK_KEY } from './advisory-lock.js';
import { redactDatabaseUrl } from './database-url.js';
import { readLocalMigrations, type LocalMigration } from './local-migrations.js';
import { MigrationError } from './migration-error.js';
import { assertHistoryAllowsApplying, planMigrations } from './migration-plan.js';
import { withMigrationConnection } from './migration-connection.js';
import { describeScriptFailure } from './script-failure.js';
import {
  createMigrationsTable,
  insertFailedRow,
  insertStartedRow,
  markRowFinished,
  migrationsTableExists,
  otherTableNames,
  readMigrationRows,
} from './migrations-table.js';
import { resolvedOptions, type MigrationLogger, type MigrationRunnerOptions } from './runner-options.js';
import { findTransactionControl } from './transaction-control.js';

export interface AppliedMigrations {
  /** Applied by this run, in order. */
  applied: string[];
  /** Applied before this run. */
  alreadyApplied: string[];
}

/** Applies every pending migration, in order, under the migration lock; throws MigrationError on refusal. */
export async function applyPendingMigrations(options: MigrationRunnerOptions): Promise<AppliedMigrations> {
  const o = resolvedOptions(options);
  // Read and vet every file before connecting: a broken folder fails without touching the database.
  const local = await readLocalMigrations(o.migrationsDir);
  for (const migration of local) assertNoTransactionControl(migration);

  const log = o.logger;
  return withMigrationConnection(o.databaseUrl, log, async (client) => {
    log.info(
      { database: redactDatabaseUrl(o.databaseUrl), lockKey: MIGRATION_LOCK_KEY },
      'migrations: connected',
    );
    await acquireMigrationLock(client, o.lockTimeoutMs, log);
    try {
      // Everything below is decided under the lock: whoever held it before us may just have applied migrations.
      await ensureMigrationsTable(client);
      const plan = planMigrations(local, await readMigrationRows(client));
      assertHistoryAllowsApplying(plan, o.migrationsDir);

      const applied: string[] = [];
      for (const migration of plan.pending) {
        await applyOneMigration(client, migration, o.now, log);
        applied.push(migration.name);
      }
      log.info({ applied, alreadyApplied: plan.alreadyApplied.length }, 'migrations: database is up to date');
      return { applied, alreadyApplied: plan.alreadyApplied };
    } finally {
      await releaseMigrationLock(client).catch(() => undefined);
    }
  });
}

function assertNoTransactionControl(migration: LocalMigration): void {
  const found = findTransactionControl(migration.script);
  if (!found) return;
  throw new MigrationError(
    'transaction_control',
    `Migration \`${migration.name}\` has a ${found.keyword} statement (line ${found.line} of its migration.sql). ` +
      `slotfeed runs each migration in a transaction of its own, which the script must not begin, end or abort: ` +
      `remove its BEGIN/COMMIT lines. A statement that cannot run inside a transaction (CREATE INDEX ` +
      `CONCURRENTLY, …) has to be applied by hand and its migration recorded with \`prisma migrate resolve --applied\`.`,
    [migration.name],
  );
}

/** Prisma's migration persistence `initialize`: create the table in an empty schema, refuse a non-empty one. */
async function ensureMigrationsTable(client: ClientBase): Promise<void> {
  if (await migrationsTableExists(client)) return;
  const tables = await otherTableNames(client);
  if (tables.length > 0) {
    throw new MigrationError(
      'schema_not_empty',
      `The database schema is not empty (tables: ${tables.slice(0, 10).join(', ')}${tables.length > 10 ? ', …' : ''}) ` +
        `but has no _prisma_migrations table, so its history is unknown (Prisma P3005). Point DATABASE_URL at an ` +
        `empty database, or baseline this one: https://pris.ly/d/migrate-baseline`,
    );
  }
  await createMigrationsTable(client);
}

async function applyOneMigration(
  client: ClientBase,
  migration: LocalMigration,
  now: () => Date,
  log: MigrationLogger,
): Promise<void> {
  const id = randomUUID();
  const startedAt = now();
  const started = { id, checksum: migration.checksum, migrationName: migration.name, startedAt };
  log.info({ migration: migration.name }, 'applying migration');

  await client.query('BEGIN');
  try {
    await insertStartedRow(client, started);
    await client.query(migration.script); // no parameters: the simple protocol, which runs many statements
    await markRowFinished(client, id, now());
    await client.query('COMMIT');
  } catch (thrown: unknown) {
    await client.query('ROLLBACK').catch(() => undefined);
    const failure = describeScriptFailure(migration, thrown);
    // Recorded outside the rolled-back transaction, as Prisma records it: the failed row blocks later runs
    // (ours and `prisma migrate deploy`) until someone decides, instead of every restarting process retrying
    // a migration that cannot succeed. Nothing of the migration itself was kept.
    const recorded = await insertFailedRow(client, { ...started, logs: failure.logs }).then(
      () => true,
      (recordError: unknown) => {
        log.warn(
          { migration: migration.name, error: String(recordError) },
          'could not record the failed migration',
        );
        return false;
      },
    );
    throw new MigrationError(
      'apply_failed',
      `Migration \`${migration.name}\` failed and was rolled back; none of it was applied.\n${failure.summary}\n` +
        (recorded
          ? `It is recorded as failed in _prisma_migrations, so further runs refuse to continue (as Prisma does) ` +
            `until it is resolved: fix the migration, mark the attempt rolled back ` +
            `(\`prisma migrate resolve --rolled-back ${migration.name}\`, or UPDATE "_prisma_migrations" SET ` +
            `"rolled_back_at" = now() WHERE "migration_name" = '${migration.name}' AND "finished_at" IS NULL), ` +
            `and run again.`
          : `Recording the failure in _prisma_migrations failed too (see the log), so the next run will try it again.`),
      [migration.name],
      { cause: thrown },
    );
  }
}
