// The one dedicated connection a run uses: the advisory lock is held by this session, and every migration's
// transaction runs on it, so no pool (a pooled connection could be a different session).
import pg from 'pg';
import { coerceError } from '../../lib/coerce-error.js';
import { assertPostgresUrl, redactDatabaseUrl } from './database-url.js';
import { MigrationError } from './migration-error.js';
import type { MigrationLogger } from './runner-options.js';

/** Shows in pg_stat_activity, so whoever finds the lock held can tell who holds it. */
const APPLICATION_NAME = 'slotfeed migrate';

export async function openMigrationConnection(
  databaseUrl: string,
  logger: MigrationLogger,
): Promise<pg.Client> {
  assertPostgresUrl(databaseUrl);
  const client = new pg.Client({ connectionString: databaseUrl, application_name: APPLICATION_NAME });
  // A connection that drops between queries emits 'error'; unheard, that event would crash the process.
  // The next query fails anyway and reports it.
  client.on('error', (thrown: Error) => logger.warn({ error: thrown.message }, 'migration connection lost'));
  try {
    await client.connect();
  } catch (thrown: unknown) {
    await client.end().catch(() => undefined);
    throw new MigrationError(
      'connection_failed',
      `Cannot connect to ${redactDatabaseUrl(databaseUrl)}: ${coerceError(thrown).message}`,
      [],
      { cause: thrown },
    );
  }
  return client;
}

/** Runs `work` on a fresh connection and always closes it; closing also releases a session lock left held. */
export async function withMigrationConnection<T>(
  databaseUrl: string,
  logger: MigrationLogger,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = await openMigrationConnection(databaseUrl, logger);
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
