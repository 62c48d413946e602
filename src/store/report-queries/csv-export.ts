// A report streamed as CSV straight from Postgres: its rows shaped in SQL (csv-rows.ts) and written by
// `COPY (…) TO STDOUT` (pg-copy-streams), passed on chunk by chunk as they come. A year of 10,000 connections'
// utilization is 1.8 million rows; read into memory first, they cost some 6 s and hundreds of megabytes before
// the first byte, where Postgres writes them as CSV in a fraction of that (docs/performance.md).
//
// The export holds one pooled connection for as long as it is read, in a read-only snapshot with the reports'
// settings (report-session.ts), its zones checked as every report's are (report-zones.ts). COPY takes no bound
// parameters, so its statement carries its values as literals (inlined-sql.ts).
import type { Readable } from 'node:stream';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { Prisma } from '../../generated/prisma/client.js';
import { createCrlfRecordEnds } from '../../lib/csv-record-ends.js';
import { PostgresUnreachableError } from '../database-errors.js';
import { isSocketFailure } from '../pooled-rows.js';
import { csvRows, readsInParts, type CsvScope } from './csv-rows.js';
import { held, type HeldConnection } from '../held-connection.js';
import {
  connectionsToSplit,
  consecutiveRuns,
  exportedSnapshot,
  partConnections,
  type ExportParts,
} from './export-parts.js';
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

/** One part of an export: a COPY under way on its connection, its chunks CRLF-ended as they are read. */
interface ExportPart {
  connection: HeldConnection;
  copy: Readable;
  chunks: AsyncIterator<Buffer>;
  crlf: (chunk: Buffer) => Buffer;
  done: boolean;
}

/**
 * The report's CSV (RFC 4180, as reportAsCsv writes it: a header of column keys, CRLF line ends) as chunks, or
 * undefined when the report is written from its rows instead (csvRows). Over many connections, a report that
 * readsInParts is read in parts at once where `parts` allows (export-parts.ts), in one snapshot: the same text.
 * Resolves once Postgres has begun to answer every part, so that a bad zone or a failing statement is an error before
 * anything is written; a failure later, in any part, ends the chunks with it when the reading reaches that part. It
 * holds its pooled connections until the chunks are read to their end, or until its `return` is called (as `for
 * await` does on a break, Readable.from on destroy): a caller that stops reading early must call it.
 */
export async function openCsvExport(
  pool: pg.Pool,
  knownZones: PostgresZoneNames,
  scope: CsvScope,
  parts?: ExportParts,
): Promise<AsyncIterableIterator<Buffer> | undefined> {
  if (csvRows(scope) === undefined) return undefined;
  let own: HeldConnection;
  try {
    own = held(await pool.connect());
  } catch (thrown: unknown) {
    // Read as every report's read of an unreachable server is (pooled-rows.ts, database-errors.ts).
    throw isSocketFailure(thrown) ? new PostgresUnreachableError(thrown) : thrown;
  }
  const holding: HeldConnection[] = [own];
  const started: ExportPart[] = [];
  try {
    const reader = readerOn(own.client);
    await own.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await own.client.query(REPORT_SETTINGS.text, REPORT_SETTINGS.values as unknown[]);
    const split = parts && readsInParts(scope) && (await connectionsToSplit(reader, scope, parts));
    if (parts && split) {
      const snapshot = await exportedSnapshot(own.client);
      holding.push(
        ...(await partConnections(pool, parts.budget, snapshot, REPORT_SETTINGS, split.parts - 1)),
      );
    }
    // A run of connections for each pooled connection the export holds; every statement is made on its own one.
    const scopes =
      split && holding.length > 1
        ? consecutiveRuns(split.ids, holding.length).map((ids) => ({ ...scope, connectionBatch: ids }))
        : [scope];
    const selects: string[] = [];
    for (const part of scopes) selects.push(await csvSelectIn(reader, part, knownZones));
    selects.forEach((select, at) => {
      const connection = holding[at]!;
      const header = at === 0 ? 'true' : 'false';
      const copy = connection.client.query(
        copyTo(`COPY (${select}) TO STDOUT WITH (FORMAT csv, HEADER ${header})`, readAhead(at, parts)),
      );
      const chunks = (copy as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
      started.push({ connection, copy, chunks, crlf: createCrlfRecordEnds(), done: false });
    });
    const firsts = await Promise.all(started.map((part) => part.chunks.next()));
    return streamed(started, firsts);
  } catch (thrown: unknown) {
    await Promise.all(
      holding.map(async (connection) => {
        const part = started.find((each) => each.connection === connection);
        if (part) closeCopy(part);
        else await giveBack(connection);
      }),
    );
    throw isSocketFailure(thrown) ? new PostgresUnreachableError(thrown) : thrown;
  }
}

/**
 * How far a part's COPY stream reads ahead of its reader. Its chunks are what each read of the socket brought (64 KiB
 * at most, libuv's read size), kept as they came (object mode: a byte-mode stream's reader is handed all it holds as
 * one Buffer, which for a part read ahead is tens of megabytes copied at once). The first part is read as it comes;
 * a later one reads ahead of its turn as many chunks as `aheadBytes` holds at 64 KiB each.
 */
function readAhead(at: number, parts: ExportParts | undefined): { objectMode: true; highWaterMark: number } {
  const chunks = at === 0 || !parts ? 16 : Math.ceil(parts.aheadBytes / SOCKET_READ_BYTES);
  return { objectMode: true, highWaterMark: chunks };
}

const SOCKET_READ_BYTES = 64 * 1024;

/**
 * A connection whose export failed before it streamed (a zone Postgres lacks, a failed statement) back to the pool
 * once its transaction is rolled back; closed when even that fails (the server gone).
 */
async function giveBack(connection: HeldConnection): Promise<void> {
  try {
    await connection.client.query('ROLLBACK');
  } catch {
    connection.release(true);
    return;
  }
  connection.release();
}

/**
 * A part left half read, or failed: its COPY cannot be stopped on its connection, so the stream is destroyed and the
 * connection closed at once (not through the stream's iterator, whose `return` waits for a read under way).
 */
function closeCopy(part: ExportPart): void {
  if (part.done) return;
  part.done = true;
  part.copy.destroy();
  part.connection.release(true);
}

/** A part read to its end: its transaction ends and its connection goes back to the pool. */
async function completeCopy(part: ExportPart): Promise<void> {
  part.done = true;
  try {
    await part.connection.client.query('COMMIT');
  } catch (thrown: unknown) {
    part.connection.release(true);
    throw thrown;
  }
  part.connection.release();
}

/**
 * The parts' chunks, one part after the other, from each one's first on. Written out rather than as an async
 * generator: a generator returned before its first `next` never runs its `finally`, and a download whose reader left
 * at once (Readable.from returns it then) would keep the connections for good. Here `return` always closes them.
 * A later part read ahead holds its chunks in its COPY stream (up to its highWaterMark) until its turn.
 */
function streamed(parts: ExportPart[], firsts: IteratorResult<Buffer>[]): AsyncIterableIterator<Buffer> {
  const waiting: (IteratorResult<Buffer> | undefined)[] = [...firsts];
  let at = 0;
  let closed = false;
  const finished = { done: true, value: undefined } as const;
  const abandon = () => {
    closed = true;
    for (const part of parts) closeCopy(part);
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      for (;;) {
        if (closed) return finished;
        const part = parts[at]!;
        let next: IteratorResult<Buffer>;
        try {
          next = waiting[at] ?? (await part.chunks.next());
          waiting[at] = undefined;
        } catch (thrown: unknown) {
          // Returned while this read was under way: its stream was destroyed, and that is no failure.
          if (closed) return finished;
          abandon();
          throw thrown;
        }
        if (closed) return finished;
        if (!next.done) return { done: false, value: part.crlf(next.value) };
        try {
          await completeCopy(part);
        } catch (thrown: unknown) {
          abandon();
          throw thrown;
        }
        at += 1;
        if (at === parts.length) {
          closed = true;
          return finished;
        }
      }
    },
    async return() {
      abandon();
      return finished;
    },
  };
}
