// The session-level advisory lock that serialises migration runs. The key is Prisma Migrate's own
// (prisma-engines, sql-schema-connector/src/flavour/postgres.rs: `SELECT pg_advisory_lock(72707369)`), so our
// runner and a `prisma migrate deploy` started by an operator also exclude each other. Session-level, not
// transaction-level: it must outlive the one transaction per migration, and it is released by Postgres if this
// process dies, so a crashed run never leaves it held.
import type { ClientBase } from 'pg';
import { MigrationError } from './migration-error.js';
import type { MigrationLogger } from './runner-options.js';

export const MIGRATION_LOCK_KEY = 72707369;

interface LockHolder {
  pid: number;
  application_name: string | null;
  backend_start: Date | null;
}

async function lockHolder(db: ClientBase): Promise<LockHolder | undefined> {
  // A bigint advisory key shows in pg_locks as classid = high 32 bits, objid = low 32 bits, objsubid = 1.
  const result = await db.query<LockHolder>(
    `SELECT l.pid, a.application_name, a.backend_start
     FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = $1 AND l.objsubid = 1
       AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     LIMIT 1`,
    [MIGRATION_LOCK_KEY],
  );
  return result.rows[0];
}

function describeHolder(holder: LockHolder | undefined): string {
  if (!holder) return 'another session';
  const app = holder.application_name ? ` "${holder.application_name}"` : '';
  const since = holder.backend_start ? `, connected since ${holder.backend_start.toISOString()}` : '';
  return `backend pid ${holder.pid}${app}${since}`;
}

/**
 * Takes the lock on `db`, waiting at most `timeoutMs` for another run to finish. The wait happens in the
 * server (lock_timeout), not in a polling loop, so waiters queue fairly.
 */
export async function acquireMigrationLock(
  db: ClientBase,
  timeoutMs: number,
  logger: MigrationLogger,
): Promise<void> {
  const immediate = await db.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
    MIGRATION_LOCK_KEY,
  ]);
  if (immediate.rows[0]?.locked === true) return;

  const holder = await lockHolder(db);
  logger.warn(
    { lockKey: MIGRATION_LOCK_KEY, holderPid: holder?.pid, timeoutMs },
    'another process is applying migrations; waiting for it',
  );
  await db.query(`SELECT set_config('lock_timeout', $1, false)`, [`${Math.max(1, Math.round(timeoutMs))}ms`]);
  try {
    await db.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  } catch (thrown: unknown) {
    if (thrown instanceof Error && 'code' in thrown && thrown.code === '55P03') {
      const current = await lockHolder(db).catch(() => holder);
      throw new MigrationError(
        'lock_timeout',
        `Waited ${Math.round(timeoutMs / 1000)} s for the migration lock (Postgres advisory lock ` +
          `${MIGRATION_LOCK_KEY}, the one \`prisma migrate\` takes too); it is still held by ` +
          `${describeHolder(current)}. Another slotfeed or prisma migrate run is applying migrations: run again ` +
          `when it has finished. If that session is stuck, ending it (SELECT pg_terminate_backend(<pid>)) ` +
          `releases the lock and rolls back the migration it was applying.`,
        [],
        { cause: thrown },
      );
    }
    throw thrown;
  } finally {
    // Best effort: a failure here must not hide the error above, and a dead connection fails the next query.
    await db.query('RESET lock_timeout').catch(() => undefined);
  }
}

export async function releaseMigrationLock(db: ClientBase): Promise<void> {
  await db.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
}
