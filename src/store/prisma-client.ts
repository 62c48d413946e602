// The one place a PrismaClient is constructed (the composition root calls it; tests through test/support/db).
// Prisma 7 talks to Postgres through a driver adapter: node-postgres via @prisma/adapter-pg, no native engine.
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { DEFAULT_PREPARED_STATEMENTS, statementNames } from '../lib/prepared-statements.js';
import { registerPool } from './pooled-rows.js';

/** Bounds on how long one pool's work may wait; 0 (or absent) means no limit, as Postgres has by default. */
export interface PoolTimeouts {
  /** Postgres cancels a statement that runs longer (statement_timeout). */
  statementTimeoutMs?: number;
  /** Postgres cancels a statement that waits longer for a lock (lock_timeout); also the wait for a pooled connection. */
  lockTimeoutMs?: number;
}

export interface PoolSettings extends PoolTimeouts {
  /** Statement texts the pool keeps prepared on its connections (lib/prepared-statements.ts); 0: none. */
  preparedStatements?: number;
}

/**
 * Interactive transactions' bounds. Prisma's defaults (2 s to start, 5 s to finish) fail ordinary work on a busy
 * machine: at a load of 7 on 2 cores a transaction waited over 2 s for a pooled connection and the demo's stop
 * logged "Unable to start a transaction in the given time" at error level. A transaction that would fail
 * otherwise may wait longer; one that holds locks too long is still ended. Calls that pass their own keep them.
 */
export const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 30_000 } as const;

export function createPrismaClient(databaseUrl: string, settings: PoolSettings = {}): PrismaClient {
  const {
    statementTimeoutMs = 0,
    lockTimeoutMs = 0,
    preparedStatements = DEFAULT_PREPARED_STATEMENTS,
  } = settings;
  const names = statementNames(preparedStatements);
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    // Sent as startup parameters, so every pooled connection has them from its first statement and a
    // PgBouncer in session mode passes them on; node-postgres leaves them out when they are 0.
    statement_timeout: statementTimeoutMs,
    lock_timeout: lockTimeoutMs,
    // A query waits for a free connection of the (10-connection) pool no longer than it would for a lock:
    // with every connection stuck behind a lock, requests fail fast instead of queueing without end.
    connectionTimeoutMillis: lockTimeoutMs,
    // Every connection works in UTC: Prisma's adapter sends a Date as its UTC wall time without a zone
    // ('2026-09-20 12:34:56.789'), which Postgres reads in the session's TimeZone, so on a server set to another
    // zone every instant written or asked about would move by its offset (test/store/server-time-zone.test.ts).
    // A startup option, so it holds from the first statement; PgBouncer (1.20 on) takes it for its tracked TimeZone.
    // And dates as ISO text (2026-09-20), whatever the server's DateStyle: statements read days and instants back as
    // text, and the retention run adds running totals up in the order of their days' text
    // (test/reports/booking-totals-migration.test.ts runs it on a server whose dates read day first).
    options: '-c TimeZone=UTC -c DateStyle=ISO,MDY',
    // Idle connections do not keep a process alive: a client that read only past Prisma (pooled-rows.ts) has a
    // pool its $disconnect does not end (Prisma ends it only once it has connected itself), and its idle
    // connections close after the pool's idle timeout.
    allowExitOnIdle: true,
  });
  const prisma = new PrismaClient({
    transactionOptions: TRANSACTION_OPTIONS,
    adapter: new PrismaPg(pool, {
      // Each pooled connection keeps what it runs prepared (lib/prepared-statements.ts).
      ...(names === undefined ? {} : { statementNameGenerator: names }),
      // $disconnect ends the pool, as it ends one the adapter makes itself.
      disposeExternalPool: true,
    }),
  });
  // A pooled connection that fails while idle (Postgres restarted, say) leaves the pool, and the next statement
  // opens another; unheard, the pool's 'error' would end the process before Prisma's first statement listens.
  pool.on('error', () => undefined);
  // The pool made here, so that the hot statements can be read from it past Prisma (pooled-rows.ts).
  registerPool(prisma, pool, names);
  return prisma;
}
