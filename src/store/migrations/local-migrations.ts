// The migrations folder as Prisma reads it (prisma/prisma, packages/migrate/src/utils/listMigrations.ts): every
// sub-directory is one migration, named by the directory, whose script is `migration.sql` read as UTF-8; the
// order is the names' `localeCompare` order, the same comparison Prisma uses, so both tools apply the same
// sequence. migration_lock.toml, when present, must name the provider this runner speaks.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { migrationChecksum } from './checksum.js';
import { MigrationError } from './migration-error.js';

export interface LocalMigration {
  /** The directory name, `<timestamp>_<name>`; also `_prisma_migrations.migration_name`. */
  name: string;
  script: string;
  checksum: string;
}

const PROVIDER = 'postgresql';
const LOCK_FILE = 'migration_lock.toml';
const SCRIPT_FILE = 'migration.sql';

function errnoCode(thrown: unknown): string | undefined {
  return thrown instanceof Error && 'code' in thrown && typeof thrown.code === 'string'
    ? thrown.code
    : undefined;
}

/** Reads every migration in `migrationsDir`, in the order they apply; fails on anything unreadable. */
export async function readLocalMigrations(migrationsDir: string): Promise<LocalMigration[]> {
  await assertLockFileProvider(migrationsDir);

  let entries;
  try {
    entries = await readdir(migrationsDir, { withFileTypes: true });
  } catch (thrown: unknown) {
    // Prisma treats a missing folder as "no migrations". Here it means a broken install, and applying nothing
    // would start slotfeed against an empty database, so it is an error.
    throw new MigrationError(
      'unreadable_migration',
      `Cannot read the migrations folder ${migrationsDir} (${errnoCode(thrown) ?? 'unknown error'}).`,
      [],
      { cause: thrown },
    );
  }

  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort((a, b) => a.localeCompare(b));

  return Promise.all(
    names.map(async (name) => {
      const scriptPath = path.join(migrationsDir, name, SCRIPT_FILE);
      let script: string;
      try {
        script = await readFile(scriptPath, 'utf8');
      } catch (thrown: unknown) {
        throw new MigrationError(
          'unreadable_migration',
          `Cannot read ${scriptPath} (${errnoCode(thrown) ?? 'unknown error'}). Every folder in ${migrationsDir} ` +
            `is a migration: restore its ${SCRIPT_FILE}, or delete the folder if it is not one.`,
          [name],
          { cause: thrown },
        );
      }
      return { name, script, checksum: migrationChecksum(script) };
    }),
  );
}

async function assertLockFileProvider(migrationsDir: string): Promise<void> {
  let content: string;
  try {
    content = await readFile(path.join(migrationsDir, LOCK_FILE), 'utf8');
  } catch {
    return; // Prisma too accepts a folder without a lock file.
  }
  // Prisma's own reading (migrations_directory.rs, read_provider_from_lock_file): the first line that starts
  // with "provider", minus `provider = ` and quotes.
  const line = content.split(/\r?\n/).find((l) => l.startsWith('provider'));
  const provider = line ? line.replace(/^provider = /, '').replace(/^"+|"+$/g, '') : '<PROVIDER NOT FOUND>';
  if (provider !== PROVIDER) {
    throw new MigrationError(
      'provider_mismatch',
      `${path.join(migrationsDir, LOCK_FILE)} says the migrations are for \`${provider}\`, but slotfeed runs ` +
        `them on \`${PROVIDER}\`. These migrations were written for another database.`,
    );
  }
}
