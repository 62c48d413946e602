// slotfeed's own `prisma migrate deploy` (see apply-pending-migrations.ts for how and why it differs).
export { applyPendingMigrations, type AppliedMigrations } from './apply-pending-migrations.js';
export { migrationStatus, type MigrationStatus } from './migration-status.js';
export { markMigrationRolledBack } from './mark-migration-rolled-back.js';
export { MigrationError, isMigrationError, type MigrationErrorCode } from './migration-error.js';
export { redactDatabaseUrl } from './database-url.js';
export { MIGRATION_LOCK_KEY } from './advisory-lock.js';
export {
  DEFAULT_LOCK_TIMEOUT_MS,
  type MigrationLogger,
  type MigrationRunnerOptions,
} from './runner-options.js';
