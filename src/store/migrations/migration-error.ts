// The runner's failures, each with a stable code (the CLI and tests branch on it) and a message written for the
// operator who has to act on it. Where Prisma has an equivalent error its code is kept alongside, so the two
// tools' documentation lines up.

export type MigrationErrorCode =
  /** A migration file changed after it was applied. */
  | 'checksum_mismatch'
  /** `_prisma_migrations` holds a failed, unresolved attempt (Prisma P3009). */
  | 'failed_migration'
  /** A migration applied to the database has no folder here. */
  | 'missing_locally'
  /** A migration failed during this run; its transaction was rolled back (Prisma P3018). */
  | 'apply_failed'
  /** The database has tables but no migration history (Prisma P3005). */
  | 'schema_not_empty'
  /** Another process held the migration lock for longer than the timeout. */
  | 'lock_timeout'
  /** migration_lock.toml names another database provider (Prisma P3019). */
  | 'provider_mismatch'
  /** The migrations folder or a migration.sql cannot be read (Prisma P3015). */
  | 'unreadable_migration'
  /** A migration script controls transactions itself, which the runner's own transaction cannot contain. */
  | 'transaction_control'
  /** Marking an attempt rolled back, but there is no failed attempt of that migration (Prisma P3011/P3012). */
  | 'not_failed'
  /** The database cannot be reached or the URL is unusable. */
  | 'connection_failed';

export class MigrationError extends Error {
  override readonly name = 'MigrationError';

  constructor(
    readonly code: MigrationErrorCode,
    message: string,
    /** The migrations the error is about, by folder name. */
    readonly migrations: readonly string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isMigrationError(thrown: unknown): thrown is MigrationError {
  return thrown instanceof MigrationError;
}
