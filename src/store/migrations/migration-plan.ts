// Local folders against the database's history: what is applied, what is pending, and what stops a run. Pure,
// so each rule is testable without a database.
import { scriptMatchesChecksum } from './checksum.js';
import type { LocalMigration } from './local-migrations.js';
import { MigrationError } from './migration-error.js';
import type { MigrationRow } from './migrations-table.js';

export interface MigrationPlan {
  /** Local migrations with a finished attempt, in apply order. */
  alreadyApplied: string[];
  /** Local migrations with no attempt that counts (rolled-back attempts do not), in apply order. */
  pending: LocalMigration[];
  /** Applied migrations whose file no longer matches the applied checksum. */
  modified: string[];
  /** Migrations the database applied that have no local folder. */
  missingLocally: string[];
  /** Attempts that neither finished nor were rolled back (Prisma's "failed migrations"). */
  failed: MigrationRow[];
}

export function planMigrations(
  local: readonly LocalMigration[],
  rows: readonly MigrationRow[],
): MigrationPlan {
  const counting = rows.filter((row) => row.rolledBackAt === null);
  const finished = counting.filter((row) => row.finishedAt !== null);
  const localNames = new Set(local.map((m) => m.name));

  return {
    alreadyApplied: local
      .filter((m) => finished.some((row) => row.migrationName === m.name))
      .map((m) => m.name),
    // Prisma's rule (apply_migrations.rs): pending means no non-rolled-back row of that name, finished or not.
    pending: local.filter((m) => !counting.some((row) => row.migrationName === m.name)),
    modified: local
      .filter((m) =>
        finished.some(
          (row) => row.migrationName === m.name && !scriptMatchesChecksum(m.script, row.checksum),
        ),
      )
      .map((m) => m.name),
    missingLocally: [...new Set(finished.map((row) => row.migrationName))].filter(
      (name) => !localNames.has(name),
    ),
    failed: counting.filter((row) => row.finishedAt === null),
  };
}

function quoted(names: readonly string[]): string {
  return names.map((name) => `\`${name}\``).join(', ');
}

function firstLine(text: string | null): string {
  const line = (text ?? '')
    .trim()
    .split('\n')
    .find((l) => l.trim() !== '');
  return line ? `: ${line.trim()}` : '';
}

/**
 * Throws when the history forbids applying anything, most fundamental problem first: unresolved failures
 * (Prisma refuses these too, P3009), then history this code does not have, then edited migrations. Prisma's
 * `migrate deploy` checks only the first; the other two are what `prisma migrate dev` would flag, and applying
 * on top of either would build on a history that is not the one in this repository.
 */
export function assertHistoryAllowsApplying(plan: MigrationPlan, migrationsDir: string): void {
  if (plan.failed.length > 0) {
    const names = [...new Set(plan.failed.map((row) => row.migrationName))];
    const details = plan.failed
      .map(
        (row) => `  - \`${row.migrationName}\`, started ${row.startedAt.toISOString()}${firstLine(row.logs)}`,
      )
      .join('\n');
    throw new MigrationError(
      'failed_migration',
      `Found failed migrations in _prisma_migrations; no new migration is applied until they are resolved ` +
        `(Prisma P3009):\n${details}\n` +
        `A failure recorded by slotfeed left nothing behind: each migration runs in one transaction, which was ` +
        `rolled back (applied_steps_count 0). A failure recorded by \`prisma migrate deploy\` may have left part ` +
        `of the migration applied (Prisma does not wrap migrations in a transaction): check the database first.\n` +
        `Once the database is as it was before the migration and its file is fixed, mark the attempt rolled ` +
        `back and run again: \`prisma migrate resolve --rolled-back <name>\`, or in SQL ` +
        `UPDATE "_prisma_migrations" SET "rolled_back_at" = now() WHERE "migration_name" = '<name>' AND ` +
        `"finished_at" IS NULL AND "rolled_back_at" IS NULL; ` +
        `If instead all of its changes are in place, \`prisma migrate resolve --applied <name>\` records it as applied.`,
      names,
    );
  }
  if (plan.missingLocally.length > 0) {
    throw new MigrationError(
      'missing_locally',
      `The database has applied migration(s) that are not in ${migrationsDir}: ${quoted(plan.missingLocally)}. ` +
        `This slotfeed is probably older than the database: deploy the version that contains them. If a ` +
        `migration folder was renamed or deleted, restore it: an applied migration keeps its name for good.`,
      plan.missingLocally,
    );
  }
  if (plan.modified.length > 0) {
    throw new MigrationError(
      'checksum_mismatch',
      `Migration(s) edited after they were applied: ${quoted(plan.modified)} (the file no longer matches the ` +
        `checksum recorded in _prisma_migrations). The database ran the old text, so the edit would never reach ` +
        `it. Restore the file as it was applied (e.g. from git history) and put the change in a new migration ` +
        `folder.`,
      plan.modified,
    );
  }
}
