// Database URLs carry the password, and they end up in log lines and error messages; this is the one place
// that turns them into something safe to show.
import { MigrationError } from './migration-error.js';

/** The URL with its password replaced by `***`; never throws, never returns the input when it cannot parse it. */
export function redactDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return '<unparsable database URL>';
  }
}

/**
 * Fails with a message that does not echo the URL when it is not a postgres URL. `new URL()`'s own TypeError
 * keeps the input (password included) on `.input`, so it is not passed on as a cause.
 */
export function assertPostgresUrl(databaseUrl: string): void {
  let protocol: string;
  try {
    protocol = new URL(databaseUrl).protocol;
  } catch {
    throw new MigrationError('connection_failed', 'The database URL is not a valid URL.');
  }
  if (protocol !== 'postgresql:' && protocol !== 'postgres:') {
    throw new MigrationError(
      'connection_failed',
      `The database URL must start with postgresql:// (got ${protocol}//…); migrations run on Postgres only.`,
    );
  }
}
