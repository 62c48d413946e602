// A report streamed as CSV straight from Postgres: its rows shaped in SQL (csv-rows.ts) and written by
// `COPY (…) TO STDOUT` (pg-copy-streams), passed on chunk by chunk as they come. A year of 10,000 connections'
// utilization is 1.8 million rows; read into memory first, they cost some 6 s and hundreds of megabytes before
// the first byte, where Postgres writes them as CSV in a fraction of that (docs/performance.md).
//
// The export holds one pooled connection for as long as it is read, in a read-only snapshot with the reports'
// settings (report-session.ts), its zones checked as every report's are (report-zones.ts). COPY takes no bound
// parameters, so its statement carries its values as literals (inlined-sql.ts).
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { Prisma } from '../../generated/prisma/client.js';
import { createCrlfRecordEnds } from '../../lib/csv-record-ends.js';
import { PostgresUnreachableError } from '../database-errors.js';
import { isSocketFailure } from '../pooled-rows.js';
import { csvRows, type CsvScope } from './csv-rows.js';
import { inlinedSql } from './inlined-sql.js';
import { REPORT_SETTINGS } from './report-session.js';
import { withPostgresZones, type PostgresZoneNames, type ZoneReader } from './report-zones.js';
import { withUnstoredFrom } from './stored-days.js';

/** Rows of a Prisma.Sql read on `client`, as the zone check asks for them. */
const readerOn = (client: pg.PoolClient): ZoneReader => ({
  async $queryRaw<T>(query: Prisma.Sql): Promise<T> {
    const result = await client.query(query.text, query.values as unknown[]);
    return result.rows as T;
  },
});

/**
 * The SELECT whose rows are the report's CSV (csvRows, its values written in), as the export runs it: its scope
 * looked up on `db`, in the export's snapshot and settings (its zones Postgres knows, and where the days after the
 * stored ones start: every report exported computes those but bookings by booking, for which it is one small read
 * more).
 */
export async function csvSelectIn(
  db: ZoneReader,
  scope: CsvScope,
  knownZones: PostgresZoneNames,
): Promise<string> {
  const zoned = await withPostgresZones(db, scope, knownZones);
  return inlinedSql(csvRows(await withUnstoredFrom(db, zoned))!);
}

/**
 * The report's CSV (RFC 4180, as reportAsCsv writes it: a header of column keys, CRLF line ends) as chunks, or
 * undefined when the report is written from its rows instead (csvRows). Resolves once Postgres has begun to
 * answer, so that a bad zone or a failing statement is an error before anything is written; a failure later
 * ends the chunks with it. It holds a pooled connection until the chunks are read to their end, or until its
 * `return` is called (as `for await` does on a break, Readable.from on destroy): a caller that stops reading
 * early must call it.
 */
export async function openCsvExport(
  pool: pg.Pool,
  knownZones: PostgresZoneNames,
  scope: CsvScope,
): Promise<AsyncIterableIterator<Buffer> | undefined> {
  if (csvRows(scope) === undefined) return undefined;
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (thrown: unknown) {
    // Read as every report's read of an unreachable server is (pooled-rows.ts, database-errors.ts).
    throw isSocketFailure(thrown) ? new PostgresUnreachableError(thrown) : thrown;
  }
  let chunks: AsyncIterator<Buffer>;
  let first: IteratorResult<Buffer>;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(REPORT_SETTINGS.text, REPORT_SETTINGS.values as unknown[]);
    const select = await csvSelectIn(readerOn(client), scope, knownZones);
    const copy = client.query(copyTo(`COPY (${select}) TO STDOUT WITH (FORMAT csv, HEADER true)`));
    chunks = (copy as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    first = await chunks.next();
  } catch (thrown: unknown) {
    await giveBack(client);
    throw isSocketFailure(thrown) ? new PostgresUnreachableError(thrown) : thrown;
  }
  return streamed(client, chunks, first);
}

/**
 * A connection whose export failed before it streamed (a zone Postgres lacks, a failed statement) back to the pool
 * once its transaction is rolled back; closed when even that fails (the server gone).
 */
async function giveBack(client: pg.PoolClient): Promise<void> {
  try {
    await client.query('ROLLBACK');
  } catch {
    client.release(true);
    return;
  }
  client.release();
}

/**
 * The rest of the COPY's chunks, each made CRLF-ended, from `first` on. Written out rather than as an async
 * generator: a generator returned before its first `next` never runs its `finally`, and a download whose reader left
 * at once (Readable.from returns it then) would keep the connection for good. Here `return` always closes it.
 */
function streamed(
  client: pg.PoolClient,
  chunks: AsyncIterator<Buffer>,
  first: IteratorResult<Buffer>,
): AsyncIterableIterator<Buffer> {
  const crlf = createCrlfRecordEnds();
  let waiting: IteratorResult<Buffer> | undefined = first;
  let closed = false;
  const finished = { done: true, value: undefined } as const;
  // Read to its end: the transaction ends and the connection goes back to the pool.
  const complete = async () => {
    closed = true;
    try {
      await client.query('COMMIT');
    } catch (thrown: unknown) {
      client.release(true);
      throw thrown;
    }
    client.release();
  };
  // Left half read, or failed: the COPY cannot be stopped on its connection, so the connection is closed.
  const abandon = async () => {
    if (closed) return;
    closed = true;
    try {
      await chunks.return?.();
    } finally {
      client.release(true);
    }
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (closed) return finished;
      let next: IteratorResult<Buffer>;
      try {
        next = waiting ?? (await chunks.next());
        waiting = undefined;
      } catch (thrown: unknown) {
        await abandon();
        throw thrown;
      }
      // Returned while this read was under way: the connection is closed already.
      if (closed) return finished;
      if (!next.done) return { done: false, value: crlf(next.value) };
      await complete();
      return finished;
    },
    async return() {
      await abandon();
      return finished;
    },
  };
}
