// Readiness asks Postgres over a connection of its own, outside the pool: with every pooled connection busy
// (behind a lock, or on slow reports) a probe through the pool would wait in line and report the pool, not
// Postgres. One connection, opened on first use and again after it breaks; concurrent probes share the one in
// flight, so a burst of /readyz never opens more.
// Whether Postgres takes writes (what a sync worker needs) is asked on a fresh connection each time: a
// session reads default_transaction_read_only when it starts, so a database or role made read-only
// (`ALTER DATABASE … SET default_transaction_read_only = on`), or a failover onto a standby, shows only in
// new sessions, which is what the worker's pool opens.
import type pg from 'pg';
import { ReadOnlyDatabaseError, type DatabaseProbe } from '../lib/readiness.js';
import type { PgSessions } from './pg-sessions.js';

/** check asks `SELECT 1`; checkWritable rejects with PostgresReadOnlyError. */
export interface PostgresProbe extends DatabaseProbe {
  close(): Promise<void>;
}

export class PostgresReadOnlyError extends ReadOnlyDatabaseError {
  constructor(readonly inRecovery: boolean) {
    super(inRecovery ? 'Postgres is a standby (in recovery)' : 'Postgres sessions are read-only');
    this.name = 'PostgresReadOnlyError';
  }
}

async function writableCheck(sessions: PgSessions, timeoutMs: number): Promise<void> {
  const client = sessions({
    applicationName: 'slotfeed readiness (writable)',
    connectTimeoutMs: timeoutMs,
    statementTimeoutMs: timeoutMs,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ read_only: boolean; in_recovery: boolean }>({
      text: "SELECT current_setting('transaction_read_only') = 'on' AS read_only, pg_is_in_recovery() AS in_recovery",
      query_timeout: timeoutMs,
    } as pg.QueryConfig);
    const row = rows[0];
    if (row === undefined || row.read_only || row.in_recovery) {
      throw new PostgresReadOnlyError(row?.in_recovery ?? false);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `sessions` opens the probe's own connections (see pg-sessions.ts). */
export function createPostgresProbe(sessions: PgSessions): PostgresProbe {
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let inFlight: Promise<void> | undefined;
  let writableInFlight: Promise<void> | undefined;
  let closed = false;

  const discard = (broken: pg.Client) => {
    if (client === broken) client = undefined;
    broken.end().catch(() => undefined);
  };

  async function connected(timeoutMs: number): Promise<pg.Client> {
    if (client) return client;
    connecting ??= (async () => {
      const fresh = sessions({
        applicationName: 'slotfeed readiness',
        connectTimeoutMs: timeoutMs,
        statementTimeoutMs: timeoutMs,
      });
      // A server restart or a terminated backend: forget the connection, the next probe opens another.
      fresh.on('error', () => discard(fresh));
      fresh.on('end', () => discard(fresh));
      try {
        await fresh.connect();
      } catch (thrown: unknown) {
        fresh.end().catch(() => undefined);
        throw thrown;
      }
      if (closed) {
        await fresh.end().catch(() => undefined);
        throw new Error('readiness probe closed');
      }
      client = fresh;
      return fresh;
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  }

  async function probeOnce(timeoutMs: number): Promise<void> {
    const conn = await connected(timeoutMs);
    try {
      await conn.query({ text: 'SELECT 1', query_timeout: timeoutMs } as pg.QueryConfig);
    } catch (thrown: unknown) {
      // A timed-out query leaves the connection in an unknown state; start afresh next time.
      discard(conn);
      throw thrown;
    }
  }

  return {
    check(timeoutMs) {
      if (closed) return Promise.reject(new Error('readiness probe closed'));
      inFlight ??= probeOnce(timeoutMs).finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
    checkWritable(timeoutMs) {
      if (closed) return Promise.reject(new Error('readiness probe closed'));
      writableInFlight ??= writableCheck(sessions, timeoutMs).finally(() => {
        writableInFlight = undefined;
      });
      return writableInFlight;
    },
    async close() {
      closed = true;
      const open = client;
      client = undefined;
      await open?.end().catch(() => undefined);
    },
  };
}
