// A transaction of raw statements on a connection of the pool behind a PrismaClient, past Prisma's interactive
// transactions: a sync's commit is some ten statements, and through Prisma each cost its query interpreter, its
// result mapping and the interactive transaction's own bookkeeping, about twice node-postgres's CPU a statement
// (pooled-rows.ts, docs/performance.md). The bounds are Prisma's: a connection waited for `maxWait` at most (then
// the pool's timeout error, read as pool_timeout), and a transaction still open after `timeout` rolled back at
// its next statement. A client no pool was registered for (pooled-rows.ts) runs the same statements in Prisma's
// transaction; rows come back as node-postgres gives them either way but for int8 and numeric, which the
// statements run this way cast (as pooledRows's do).
import type pg from 'pg';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { PostgresUnreachableError } from './database-errors.js';
import { held } from './held-connection.js';
import { isSocketFailure, registeredPool, type Pool } from './pooled-rows.js';

export interface SqlTransaction {
  /** The rows of `statement`, run in the transaction. */
  rows<Row>(statement: Prisma.Sql): Promise<Row[]>;
}

export interface TransactionBounds {
  maxWait: number;
  timeout: number;
}

/** As node-postgres's pool says it (database-errors.ts reads it as pool_timeout). */
const POOL_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

export class TransactionExpiredError extends Error {
  constructor(timeoutMs: number) {
    super(`the transaction ran past its ${timeoutMs} ms and was rolled back`);
    this.name = 'TransactionExpiredError';
  }
}

const unreachableOr = (thrown: unknown) =>
  isSocketFailure(thrown) ? new PostgresUnreachableError(thrown) : thrown;

/** A connection of the pool within `maxWait`; one that comes later goes back at once. */
async function checkout(pool: pg.Pool, maxWait: number): Promise<pg.PoolClient> {
  const connecting = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(POOL_TIMEOUT_MESSAGE)), maxWait);
  });
  try {
    return await Promise.race([connecting, late]);
  } catch (thrown: unknown) {
    connecting.then((client) => client.release()).catch(() => undefined);
    throw unreachableOr(thrown);
  } finally {
    clearTimeout(timer);
  }
}

async function onPool<T>(
  pooled: Pool,
  work: (tx: SqlTransaction) => Promise<T>,
  bounds: TransactionBounds,
): Promise<T> {
  // Heard from checkout to release: a connection the server ends between two of the transaction's statements (an
  // administrator's pg_terminate_backend, a failover) tells only by an 'error' event, which unheard would end the
  // process; the transaction meets the failure at its next statement instead.
  const connection = held(await checkout(pooled.pool, bounds.maxWait));
  const { client } = connection;
  const expiresAt = performance.now() + bounds.timeout;
  let broken: Error | undefined;
  const run = async <Row>(statement: { text: string; values: readonly unknown[] }) => {
    const name = pooled.names?.({ sql: statement.text, args: statement.values }) || undefined;
    try {
      const result = await client.query<Row & pg.QueryResultRow>({
        text: statement.text,
        values: statement.values as unknown[],
        name,
      });
      return result.rows;
    } catch (thrown: unknown) {
      if (isSocketFailure(thrown)) broken = thrown as Error;
      throw unreachableOr(thrown);
    }
  };
  try {
    await run({ text: 'BEGIN', values: [] });
    const result = await work({
      rows: <Row>(statement: Prisma.Sql) => {
        if (performance.now() > expiresAt) throw new TransactionExpiredError(bounds.timeout);
        return run<Row>(statement);
      },
    });
    if (performance.now() > expiresAt) throw new TransactionExpiredError(bounds.timeout);
    await run({ text: 'COMMIT', values: [] });
    return result;
  } catch (thrown: unknown) {
    // A connection whose ROLLBACK fails is not handed to anyone else: the pool closes it.
    if (broken === undefined) {
      await run({ text: 'ROLLBACK', values: [] }).catch((rollbackFailed: unknown) => {
        broken = rollbackFailed as Error;
      });
    }
    throw thrown;
  } finally {
    connection.release(broken !== undefined);
  }
}

/** Prisma's interactive transaction as a SqlTransaction, for statements written once to run in either. */
export function sqlThroughPrisma(tx: Prisma.TransactionClient): SqlTransaction {
  return { rows: <Row>(statement: Prisma.Sql) => tx.$queryRaw<Row[]>(statement) };
}

/** Runs `work`'s statements in one transaction: on the pool behind `prisma` when it has one, else through Prisma. */
export async function pooledTransaction<T>(
  prisma: PrismaClient,
  work: (tx: SqlTransaction) => Promise<T>,
  bounds: TransactionBounds,
): Promise<T> {
  const pooled = registeredPool(prisma);
  if (pooled !== undefined) return onPool(pooled, work, bounds);
  return prisma.$transaction((tx) => work(sqlThroughPrisma(tx)), bounds);
}
