// Which failures mean "Postgres cannot answer right now" rather than "this request is wrong": a statement
// cancelled by statement_timeout or lock_timeout, no free pooled connection in time, a server that cannot be
// reached or went away. The web role answers these 503 with Retry-After (a client should simply come back),
// not 500, and a caller may fall back to what it remembers. Apart from these, the failures that no retry
// mends (a database not migrated, missing, or refusing the user), which the CLI explains with what to do.
import pg from 'pg';
import { Prisma } from '../generated/prisma/client.js';

export type UnavailableReason = 'statement_timeout' | 'lock_timeout' | 'pool_timeout' | 'unreachable';

// SQLSTATEs: 57014 query_canceled (statement_timeout), 55P03 lock_not_available (lock_timeout),
// 53300 too_many_connections, 57P01-57P03 the server shutting down or starting, 08xxx connection exceptions.
const BY_SQLSTATE: Record<string, UnavailableReason> = {
  '57014': 'statement_timeout',
  '55P03': 'lock_timeout',
  '53300': 'unreachable',
  '57P01': 'unreachable',
  '57P02': 'unreachable',
  '57P03': 'unreachable',
};

// Prisma's own codes: P1001 cannot reach, P1002 timed out reaching, P1008 operation timed out, P1017 server
// closed the connection, P2024 no pooled connection in time, P2028 a transaction not started in time (maxWait).
const BY_PRISMA_CODE: Record<string, UnavailableReason> = {
  P1001: 'unreachable',
  P1002: 'unreachable',
  P1008: 'statement_timeout',
  P1017: 'unreachable',
  P2024: 'pool_timeout',
  P2028: 'pool_timeout',
};

// The driver adapter's kinds for failures below SQL (socket, TLS, server gone).
const BY_ADAPTER_KIND: Record<string, UnavailableReason> = {
  DatabaseNotReachable: 'unreachable',
  ConnectionClosed: 'unreachable',
  SocketTimeout: 'unreachable',
  TooManyConnections: 'unreachable',
  TlsConnectionError: 'unreachable',
};

interface AdapterCause {
  kind?: unknown;
  code?: unknown;
  originalCode?: unknown;
}

function adapterCauseOf(error: Prisma.PrismaClientKnownRequestError): AdapterCause | undefined {
  const meta = error.meta as { driverAdapterError?: { cause?: AdapterCause } } | undefined;
  return meta?.driverAdapterError?.cause;
}

/** A statement read past Prisma (pooled-rows.ts) whose connection could not be made or broke. */
export class PostgresUnreachableError extends Error {
  constructor(cause: { message: string }) {
    super(`Postgres cannot be reached: ${cause.message}`, { cause });
    this.name = 'PostgresUnreachableError';
  }
}

const unavailableBySqlState = (sqlState: string): UnavailableReason | undefined =>
  BY_SQLSTATE[sqlState] ?? (sqlState.startsWith('08') ? 'unreachable' : undefined);

/**
 * Whether a transaction failed only because another committed first (SQLSTATE 40001, or a deadlock, 40P01; Prisma's
 * P2034): done again, it can succeed.
 */
export function isSerializationFailure(thrown: unknown): boolean {
  const retryable = (code: unknown) => code === '40001' || code === '40P01';
  if (thrown instanceof pg.DatabaseError) return retryable(thrown.code);
  if (thrown instanceof Prisma.PrismaClientKnownRequestError) {
    const cause = adapterCauseOf(thrown);
    return thrown.code === 'P2034' || retryable(cause?.originalCode) || retryable(cause?.code);
  }
  return false;
}

/** Why Postgres could not answer, or undefined when the error is of another kind. */
export function databaseUnavailableReason(thrown: unknown): UnavailableReason | undefined {
  // A statement read from the pool past Prisma (pooled-rows.ts) fails with node-postgres's own error.
  if (thrown instanceof pg.DatabaseError && thrown.code !== undefined)
    return unavailableBySqlState(thrown.code);
  if (thrown instanceof PostgresUnreachableError) return 'unreachable';
  if (thrown instanceof Prisma.PrismaClientKnownRequestError) {
    const cause = adapterCauseOf(thrown);
    const sqlState = typeof cause?.originalCode === 'string' ? cause.originalCode : cause?.code;
    if (typeof sqlState === 'string') {
      const reason = unavailableBySqlState(sqlState);
      if (reason) return reason;
    }
    if (typeof cause?.kind === 'string' && BY_ADAPTER_KIND[cause.kind]) return BY_ADAPTER_KIND[cause.kind];
    return BY_PRISMA_CODE[thrown.code];
  }
  if (thrown instanceof Prisma.PrismaClientInitializationError) return 'unreachable';
  if (thrown instanceof Error) {
    // node-postgres's pool rejects a checkout with a plain Error, which the adapter passes through unwrapped.
    if (thrown.message === 'timeout exceeded when trying to connect') return 'pool_timeout';
    if (/^Connection terminated/.test(thrown.message)) return 'unreachable';
  }
  return undefined;
}

/**
 * What keeps a reachable Postgres from serving slotfeed until an operator acts: `not_migrated`, the schema lacks
 * a table or column the code reads (migrations not applied, or not all of them: `slotfeed migrate`);
 * `no_such_database`, the URL names a database the server does not have; `access_denied`, the server refused
 * the URL's user or password. Undefined for any other error.
 */
export type DatabaseSetupProblem = 'not_migrated' | 'no_such_database' | 'access_denied';

// SQLSTATEs: 42P01 undefined_table, 42703 undefined_column, 3D000 invalid_catalog_name, 28000
// invalid_authorization_specification (an unknown role), 28P01 invalid_password.
const SETUP_BY_SQLSTATE: Record<string, DatabaseSetupProblem> = {
  '42P01': 'not_migrated',
  '42703': 'not_migrated',
  '3D000': 'no_such_database',
  '28000': 'access_denied',
  '28P01': 'access_denied',
};

// Prisma's: P2021 table does not exist, P2022 column does not exist, P1003 database does not exist, P1000
// authentication failed, P1010 access denied.
const SETUP_BY_PRISMA_CODE: Record<string, DatabaseSetupProblem> = {
  P2021: 'not_migrated',
  P2022: 'not_migrated',
  P1003: 'no_such_database',
  P1000: 'access_denied',
  P1010: 'access_denied',
};

export function databaseSetupProblem(thrown: unknown): DatabaseSetupProblem | undefined {
  if (thrown instanceof pg.DatabaseError && thrown.code !== undefined) return SETUP_BY_SQLSTATE[thrown.code];
  if (!(thrown instanceof Prisma.PrismaClientKnownRequestError)) return undefined;
  const sqlState = adapterCauseOf(thrown)?.originalCode;
  return (
    (typeof sqlState === 'string' ? SETUP_BY_SQLSTATE[sqlState] : undefined) ??
    SETUP_BY_PRISMA_CODE[thrown.code]
  );
}
