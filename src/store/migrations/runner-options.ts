// What every entry point of the runner takes. The logger is pino-shaped (main passes its pino logger) but
// only the two levels the runner uses are required, so tests can pass a recorder.

export interface MigrationLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface MigrationRunnerOptions {
  databaseUrl: string;
  /** The `prisma/migrations` folder. */
  migrationsDir: string;
  logger?: MigrationLogger;
  /** How long to wait for another process's run to release the migration lock. Default 60 s. */
  lockTimeoutMs?: number;
  /** Clock for started_at / finished_at (Prisma records the client's time too). Default: the system clock. */
  now?: () => Date;
}

export const DEFAULT_LOCK_TIMEOUT_MS = 60_000;

const silentLogger: MigrationLogger = { info: () => undefined, warn: () => undefined };

export function resolvedOptions(options: MigrationRunnerOptions): Required<MigrationRunnerOptions> {
  return {
    databaseUrl: options.databaseUrl,
    migrationsDir: options.migrationsDir,
    logger: options.logger ?? silentLogger,
    lockTimeoutMs: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
    now: options.now ?? (() => new Date()),
  };
}
