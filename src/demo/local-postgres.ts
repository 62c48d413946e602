// Which Postgres the demo uses: DATABASE_URL when it is set; otherwise an embedded server with its data in the
// project's `.slotfeed/postgres`, kept between runs. Either way the database is migrated before it is used.
import pg from 'pg';
import type { Logger } from '../log.js';
import { applyPendingMigrations, redactDatabaseUrl } from '../store/migrations/index.js';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres-server.js';

export interface LocalPostgres {
  /** URL of slotfeed's database. */
  url: string;
  source: 'env' | 'embedded';
  /** The embedded server, when one was started. */
  server: RunningPostgres | null;
  /** Stops the embedded server, if any; safe to call twice. */
  stop(): Promise<void>;
}

export interface LocalPostgresInput {
  env: Record<string, string | undefined>;
  /** Where the embedded cluster lives (e.g. `.slotfeed/postgres`). */
  dataDir: string;
  /** Superuser password of a cluster created now. */
  password: string;
  migrationsDir: string;
  logger: Logger;
  /** Name of slotfeed's database in the embedded cluster. Default `slotfeed`. */
  database?: string;
}

/** Whether a Postgres at `url` accepts a connection and a query within the timeout. */
export async function postgresAnswers(url: string, timeoutMs = 3000): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  // A server that drops the connection later must not crash the process through an unhandled 'error'.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates `name` unless it exists; returns whether it did. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount !== 0) return false;
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
    return true;
  } finally {
    await client.end();
  }
}

export function databaseUrlOf(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

export async function resolveLocalPostgres(input: LocalPostgresInput): Promise<LocalPostgres> {
  const { logger } = input;
  const fromEnv = input.env.DATABASE_URL;
  if (fromEnv !== undefined && fromEnv !== '') {
    logger.info({ url: redactDatabaseUrl(fromEnv) }, 'using the Postgres of DATABASE_URL');
    await applyPendingMigrations({ databaseUrl: fromEnv, migrationsDir: input.migrationsDir, logger });
    return { url: fromEnv, source: 'env', server: null, stop: async () => undefined };
  }

  const server = await startEmbeddedPostgres({
    dataDir: input.dataDir,
    password: input.password,
    onLog: (line) => logger.debug({ postgres: line }, 'embedded postgres'),
  });
  try {
    const database = input.database ?? 'slotfeed';
    const created = await ensureDatabase(server.adminUrl, database);
    const url = databaseUrlOf(server.adminUrl, database);
    await applyPendingMigrations({ databaseUrl: url, migrationsDir: input.migrationsDir, logger });
    logger.info({ port: server.port, pid: server.pid, created }, 'embedded postgres ready');
    return { url, source: 'embedded', server, stop: () => server.stop() };
  } catch (thrown: unknown) {
    await server.stop().catch(() => undefined);
    throw thrown;
  }
}
