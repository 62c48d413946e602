// Scratch copies of prisma/migrations for runner tests that edit, add or break migrations without touching
// the real folder.
import { cp, mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MIGRATIONS_DIR } from '../../support/db.js';

export interface MigrationsCopy {
  dir: string;
  /** Adds (or replaces) `<name>/migration.sql`. */
  write(name: string, sql: string): Promise<void>;
  read(name: string): Promise<string>;
  remove(name: string): Promise<void>;
  /**
   * Removes `name` and every migration after it: a test of one migration over the history before it, where a
   * later migration would need its columns (or would move the rows the test reads).
   */
  removeFrom(name: string): Promise<void>;
  cleanup(): Promise<void>;
}

/** A temporary copy of the real migrations folder (or an empty one with only the lock file). */
export async function copyMigrations(options: { empty?: boolean } = {}): Promise<MigrationsCopy> {
  const root = await mkdtemp(path.join(tmpdir(), 'slotfeed-migrations-'));
  const dir = path.join(root, 'migrations');
  if (options.empty) {
    await mkdir(dir);
    await cp(path.join(MIGRATIONS_DIR, 'migration_lock.toml'), path.join(dir, 'migration_lock.toml'));
  } else {
    await cp(MIGRATIONS_DIR, dir, { recursive: true });
  }
  return {
    dir,
    async write(name, sql) {
      await mkdir(path.join(dir, name), { recursive: true });
      await writeFile(path.join(dir, name, 'migration.sql'), sql);
    },
    read: (name) => readFile(path.join(dir, name, 'migration.sql'), 'utf8'),
    remove: (name) => rm(path.join(dir, name), { recursive: true, force: true }),
    async removeFrom(name) {
      // Folder names begin with their timestamp, so their order is the order they are applied in.
      const later = (await readdir(dir, { withFileTypes: true }))
        .filter((entry) => entry.isDirectory() && entry.name >= name)
        .map((entry) => entry.name);
      await Promise.all(later.map((folder) => rm(path.join(dir, folder), { recursive: true, force: true })));
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
