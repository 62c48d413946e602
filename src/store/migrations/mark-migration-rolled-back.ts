// The equivalent of `prisma migrate resolve --rolled-back <name>` (prisma-engines core,
// mark_migration_rolled_back.rs): an operator's statement that a failed attempt left nothing behind, after
// which a run applies the (fixed) migration again. Needed here because the Prisma CLI that offers it cannot
// download its engine on this network.
import { acquireMigrationLock, releaseMigrationLock } from './advisory-lock.js';
import { MigrationError } from './migration-error.js';
import { withMigrationConnection } from './migration-connection.js';
import { markFailedRowsRolledBack, migrationsTableExists, readMigrationRows } from './migrations-table.js';
import { resolvedOptions, type MigrationRunnerOptions } from './runner-options.js';

/** Marks every unresolved failed attempt of `migrationName` rolled back; throws if there is none. */
export async function markMigrationRolledBack(
  options: Omit<MigrationRunnerOptions, 'migrationsDir'>,
  migrationName: string,
): Promise<void> {
  const o = resolvedOptions({ ...options, migrationsDir: '' });
  await withMigrationConnection(o.databaseUrl, o.logger, async (client) => {
    await acquireMigrationLock(client, o.lockTimeoutMs, o.logger);
    try {
      const rows = (await migrationsTableExists(client)) ? await readMigrationRows(client) : [];
      const attempts = rows.filter((row) => row.migrationName === migrationName);
      if (attempts.length === 0) {
        throw new MigrationError(
          'not_failed',
          `Migration \`${migrationName}\` cannot be marked rolled back: it was never applied to this database ` +
            `(Prisma P3011). Give the whole folder name, e.g. 20261121000000_init.`,
          [migrationName],
        );
      }
      const marked = await markFailedRowsRolledBack(client, migrationName, o.now());
      if (marked === 0) {
        throw new MigrationError(
          'not_failed',
          `Migration \`${migrationName}\` cannot be marked rolled back: it has no failed attempt (Prisma P3012).`,
          [migrationName],
        );
      }
      o.logger.info({ migration: migrationName, attempts: marked }, 'failed migration marked rolled back');
    } finally {
      await releaseMigrationLock(client).catch(() => undefined);
    }
  });
}
