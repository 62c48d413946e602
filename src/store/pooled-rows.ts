// A hot statement's rows read straight from the node-postgres pool behind a PrismaClient, past Prisma's query
// interpreter: each raw statement through `$queryRaw` cost some 0.15–0.2 ms more CPU than node-postgres alone
// (test/bench: a push's four statements, 6.5–7.0 ms a push through Prisma, 5.3–5.7 ms this way;
// docs/performance.md). The statement is the same Prisma.Sql, named for preparing as Prisma's own are
// (lib/prepared-statements.ts), on the same pool, so the two share its connections and its bounds.
//
// Only for statements outside a transaction: a transaction's client is not a pool's, so it goes through Prisma
// and stays on the transaction's connection, as does any client not made by createPrismaClient (prisma-client.ts
// registers the pool of each client it makes). The rows are node-postgres's: the same as Prisma's for text,
// integers up to int4, floats, booleans, timestamps, JSON and arrays of these; a statement read this way returns
// no int8 or numeric it uses (node-postgres gives those as strings, Prisma as bigint and Decimal), as
// test/store/pooled-rows.test.ts checks for each kind it reads. A failure is node-postgres's DatabaseError, or for a
// server that cannot be reached a PostgresUnreachableError, which database-errors.ts reads as it reads Prisma's.
import type pg from 'pg';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { StatementNames } from '../lib/prepared-statements.js';
import { PostgresUnreachableError } from './database-errors.js';

export interface Pool {
  pool: pg.Pool;
  names: StatementNames | undefined;
}

// Keyed by the client itself, so that nothing but a client createPrismaClient made (never a transaction's) is
// ever read past Prisma.
const poolsOf = new WeakMap<object, Pool>();

/** Lets pooledRows read `prisma`'s statements from `pool`, the pool its adapter uses. */
export function registerPool(prisma: PrismaClient, pool: pg.Pool, names: StatementNames | undefined): void {
  poolsOf.set(prisma, { pool, names });
}

/**
 * The node-postgres pool behind `prisma`, for work Prisma cannot do (a streamed COPY, store/report-queries/csv-export.ts);
 * undefined for a client createPrismaClient did not make, or one whose pool has ended.
 */
export function poolBehind(prisma: object): pg.Pool | undefined {
  const pooled = poolsOf.get(prisma);
  return pooled === undefined || pooled.pool.ending ? undefined : pooled.pool;
}

/** The pool registered for `db` and its statements' names; undefined for any other client, or once it ended. */
export function registeredPool(db: object): Pool | undefined {
  const pooled = poolsOf.get(db);
  return pooled === undefined || pooled.pool.ending ? undefined : pooled;
}

/** The rows of `statement`: from the pool behind `db` when it has one registered, else through Prisma. */
export async function pooledRows<Row>(
  db: Pick<PrismaClient, '$queryRaw'>,
  statement: Prisma.Sql,
): Promise<Row[]> {
  const pooled = poolsOf.get(db);
  // Ended by $disconnect: Prisma opens a pool of its own should the client be used again.
  if (pooled === undefined || pooled.pool.ending) return db.$queryRaw<Row[]>(statement);
  const name = pooled.names?.({ sql: statement.text, args: statement.values }) || undefined;
  try {
    const result = await pooled.pool.query<Row & pg.QueryResultRow>({
      text: statement.text,
      values: statement.values as unknown[],
      name,
    });
    return result.rows;
  } catch (thrown: unknown) {
    throw isSocketFailure(thrown) ? new PostgresUnreachableError(thrown) : thrown;
  }
}

/**
 * A connection that could not be made or broke (ECONNREFUSED, ENOTFOUND, ECONNRESET, or every address of a name
 * refused, as an AggregateError): Prisma's adapter reads these as an unreachable database, and so does this. Read
 * structurally: Node's socket errors come from its own realm, where `instanceof Error` fails for a vm-sandboxed
 * caller (jest).
 */
export function isSocketFailure(thrown: unknown): thrown is { message: string } {
  if (typeof thrown !== 'object' || thrown === null) return false;
  const { code, syscall, name, errors } = thrown as Record<string, unknown>;
  return (
    (typeof code === 'string' && typeof syscall === 'string') ||
    (name === 'AggregateError' && Array.isArray(errors))
  );
}
