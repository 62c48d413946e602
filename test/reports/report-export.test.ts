// Reports as CSV streamed from Postgres (store/report-queries/csv-export.ts): for every report, grouping and scope
// (report-answers.ts), the CSV the CLI and the admin's download write is byte for byte the one formatted from the
// report's rows (reportAsCsv), over a history computed from its rows and over one whose past days are stored, with
// connection names that need quoting (commas, quotes, a line break) or are empty. A download left unread gives
// its connection back, and a failing statement is an error before anything is written.
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli/program.js';
import { reportAsCsv } from '../../src/reports/report-format.js';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { runReport, runReportCsv } from '../../src/reports/run-report.js';
import { poolBehind } from '../../src/store/pooled-rows.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createBesideBudget } from '../../src/store/report-queries/report-session.js';
import { createReportStore } from '../../src/store/reports.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { patient } from '../support/patience.js';
import { storeOnly } from '../support/store-only.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';
import { reportCases } from './report-answers.js';

let db: TestDatabase;
let ids: { connections: string[]; eventId: string };

beforeAll(async () => {
  db = await createTestDatabase('report_export');
  ids = await generateMixedHistory(db.prisma);
  // Names a CSV must quote: a comma, a quote and a line break in one; another with none at all (an empty
  // e-mail is the name: COALESCE takes it).
  await db.sql.query(`UPDATE connection SET email = $1 WHERE id = $2`, [
    'Zoë, "the ops desk"\nBerlin',
    ids.connections[0],
  ]);
  await db.sql.query(`UPDATE connection SET email = '' WHERE id = $1`, [ids.connections[1]]);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

async function text(chunks: AsyncIterable<Buffer | string>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(parts).toString('utf8');
}

/**
 * Leaves an export as a reader that went away would: after its first chunk (the `i`th time, i even: a download whose
 * reader left), or before anything was read (odd: the admin's reply stream destroyed at once).
 */
async function leaveUnread(exported: AsyncIterable<Buffer>, i: number): Promise<void> {
  if (i % 2 === 0) {
    for await (const chunk of exported) {
      expect(chunk.length).toBeGreaterThan(0);
      break;
    }
  } else {
    const body = Readable.from(exported);
    body.destroy();
    await finished(body).catch(() => undefined);
  }
}

/**
 * An export read in as many parts as it has connections (availability's: csv-rows.ts, readsInParts), each part
 * reading ahead a chunk at most, with second connections for three parts beside the first (a wait for one as long
 * as the machine's load needs, not a quiet second).
 */
const IN_PARTS = { atOnce: 4, fewestConnections: 1, aheadBytes: 1 };
const inParts = () => createReportStore(db.prisma, IN_PARTS, createBesideBudget(3, patient(1_000)));

/** The cases streamed from Postgres: availability's, utilization's and bookings' by day, week and booking. */
const STREAMED_CASES = () =>
  reportCases(ids).filter(
    (c) =>
      c.name === 'availability' ||
      c.name === 'utilization' ||
      (c.name === 'bookings' && ['day', 'week', 'booking'].includes(c.raw.by ?? '')),
  ).length;

/** Each case whose CSV differs from its rows' and how many cases were streamed from Postgres at all. */
async function compareEveryCase(
  reports = createReportStore(db.prisma),
): Promise<{ differing: string[]; streamed: number; rows: number }> {
  const differing: string[] = [];
  let streamed = 0;
  let rows = 0;
  for (const c of reportCases(ids)) {
    const query = parseReportQuery(c.name, c.raw, HISTORY_NOW);
    const expected = reportAsCsv(await runReport(reports, query));
    const exported = await reports.csv(query);
    if (exported === undefined) continue;
    streamed += 1;
    rows += expected.split('\r\n').length - 2;
    if ((await text(exported)) !== expected) differing.push(`${c.name}, ${c.label}`);
    // And through the entry the CLI and the admin's download take.
    if ((await text(await runReportCsv(reports, query))) !== expected)
      differing.push(`${c.name}, ${c.label} (run)`);
  }
  return { differing, streamed, rows };
}

describe('reports as CSV streamed from Postgres', () => {
  it('writes every report, grouping and scope as the CSV of its rows, from the history itself', async () => {
    const { differing, streamed, rows } = await compareEveryCase();
    expect(differing).toEqual([]);
    // availability, utilization and bookings by day, by week and by booking, in each scope: not vacuous.
    expect(streamed).toBe(STREAMED_CASES());
    expect(rows).toBeGreaterThan(1_000);
  });

  it('writes the same once the past days are stored', async () => {
    await pruneHistory(db.prisma, storeOnly(2), { now: HISTORY_NOW, pause: async () => undefined });
    const stored = await db.sql.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM utilization_day`);
    expect(stored.rows[0]!.n).toBeGreaterThan(0);
    const { differing, streamed } = await compareEveryCase();
    expect(differing).toEqual([]);
    expect(streamed).toBe(STREAMED_CASES());
  });

  it('writes the same read in parts at once, a connection a part, each part read ahead a chunk', async () => {
    const { differing, streamed } = await compareEveryCase(inParts());
    expect(differing).toEqual([]);
    expect(streamed).toBe(STREAMED_CASES());
  });

  it('writes the same when stored days end early or were stored in another zone, and names tie, each connection in its place', async () => {
    // Stored days are read in the report's order and the days computed after them merged in (stored-days.ts): one
    // connection's last five days computed after its stored ones, another's all computed (its days were stored in
    // a zone it has left).
    const [, , partly, moved] = ids.connections;
    await db.sql.query(`UPDATE report_days_stored SET through = through - 5 WHERE connection_id = $1`, [
      partly,
    ]);
    await db.sql.query(`UPDATE report_days_stored SET zone = 'Etc/GMT+5' WHERE connection_id = $1`, [moved]);
    // And the two share a name, so their ids decide their order, as the report's rank does.
    await db.sql.query(`UPDATE connection SET email = 'desk@example.org' WHERE id = ANY($1::uuid[])`, [
      [partly, moved],
    ]);
    const { differing, streamed } = await compareEveryCase();
    expect(differing).toEqual([]);
    expect(streamed).toBe(STREAMED_CASES());
    // The two that tie are cut apart: each connection is a part of its own.
    expect((await compareEveryCase(inParts())).differing).toEqual([]);
  });

  it('quotes a name with a comma, quotes and a line break, its line break kept inside the quotes', async () => {
    const query = parseReportQuery('utilization', { connection: ids.connections[0] }, HISTORY_NOW);
    const csv = await text(await runReportCsv(createReportStore(db.prisma), query));
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe('connection_id,connection,day,offered_minutes,bookings,booked_minutes,share');
    expect(lines[1]).toMatch(new RegExp(`^${ids.connections[0]},"Zoë, ""the ops desk""\nBerlin",2026-`));
  });

  it('is what `slotfeed report … --format csv` writes', async () => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(
      ['report', 'bookings', '--by', 'week', '--format', 'csv', '--at', HISTORY_NOW.toISOString()],
      { DATABASE_URL: db.url, LOG_LEVEL: 'silent' },
      {
        stdout: { write: (t) => void (stdout += t), isTTY: false },
        stderr: { write: (t) => void (stderr += t) },
      },
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const query = parseReportQuery('bookings', { by: 'week' }, HISTORY_NOW);
    expect(stdout).toBe(reportAsCsv(await runReport(createReportStore(db.prisma), query)));
  });

  it('gives its connection back when the download is left unread', async () => {
    const reports = createReportStore(db.prisma);
    const query = parseReportQuery('bookings', { by: 'day' }, HISTORY_NOW);
    const pool = poolBehind(db.prisma)!;
    for (let i = 0; i < 12; i += 1) {
      await leaveUnread((await reports.csv(query))!, i);
      // None is still held by the export left behind.
      expect(pool.totalCount - pool.idleCount).toBe(0);
    }
    // More than the pool's 10 connections were opened and left, and one more export runs.
    const csv = await text((await reports.csv(query))!);
    expect(csv).toBe(reportAsCsv(await runReport(reports, query)));
    const copies = await db.sql.query<{ n: number }>(
      `SELECT COUNT(*)::int AS n FROM pg_stat_activity
       WHERE query LIKE 'COPY (%' AND state <> 'idle' AND datname = current_database()`,
    );
    expect(copies.rows[0]!.n).toBe(0);
  });
});

describe('an export over many connections read in parts at once', () => {
  /**
   * The backends of the export's COPY statements, running or read and not yet ended, in the order their
   * transactions began: the export's own first (its snapshot is the one the others take).
   */
  const copiesHeld = async () =>
    (
      await db.sql.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
         WHERE query LIKE 'COPY (%' AND state <> 'idle' AND datname = current_database()
         ORDER BY xact_start, pid`,
      )
    ).rows.map((row) => row.pid);

  /** Until the backends of the connections an export closed have ended: each ends once it notices. */
  const copiesEnded = async () => {
    while ((await copiesHeld()).length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  };

  it('reads its parts at once, each on a connection of its own, and gives every one back', async () => {
    const reports = inParts();
    const query = parseReportQuery('availability', {}, HISTORY_NOW);
    const pool = poolBehind(db.prisma)!;
    const exported = (await reports.csv(query))!;
    // The export's own connection and the three second connections the budget gives: a part each.
    expect(await copiesHeld()).toHaveLength(4);
    expect(await text(exported)).toBe(reportAsCsv(await runReport(reports, query)));
    expect(pool.totalCount - pool.idleCount).toBe(0);
    expect(await copiesHeld()).toEqual([]);
    // And the next export has its second connections again.
    const again = (await reports.csv(query))!;
    expect(await copiesHeld()).toHaveLength(4);
    await (again as AsyncIterableIterator<Buffer>).return!();
    await copiesEnded();
    // Reports bound by Node's reading of their rows rather than Postgres's work on them are read in one part.
    const utilization = (await reports.csv(parseReportQuery('utilization', {}, HISTORY_NOW)))!;
    expect(await copiesHeld()).toHaveLength(1);
    await (utilization as AsyncIterableIterator<Buffer>).return!();
  });

  it('takes its listener off every connection it gives back, read to the end or left', async () => {
    const pool = poolBehind(db.prisma)!;
    const heard: number[] = [];
    const released = (_error: unknown, client: pg.PoolClient) => heard.push(client.listenerCount('error'));
    pool.on('release', released);
    try {
      const reports = inParts();
      const query = parseReportQuery('availability', {}, HISTORY_NOW);
      await text((await reports.csv(query))!);
      await leaveUnread((await reports.csv(query))!, 0);
    } finally {
      pool.off('release', released);
    }
    // Four parts twice, each connection back with the pool's own listener alone on it.
    expect(heard).toEqual(Array(8).fill(1));
  });

  it('gives every connection back when left unread, and has them again for the next', async () => {
    const reports = inParts();
    const query = parseReportQuery('availability', {}, HISTORY_NOW);
    const pool = poolBehind(db.prisma)!;
    for (let i = 0; i < 6; i += 1) {
      await leaveUnread((await reports.csv(query))!, i);
      expect(pool.totalCount - pool.idleCount).toBe(0);
    }
    await copiesEnded();
    // The budget of second connections came back whole: the next export is in four parts again.
    const exported = (await reports.csv(query))!;
    expect(await copiesHeld()).toHaveLength(4);
    expect(await text(exported)).toBe(reportAsCsv(await runReport(reports, query)));
  });

  it("ends with an error, not a shorter CSV, when a later part's connection is lost while it waits its turn", async () => {
    const reports = inParts();
    const query = parseReportQuery('availability', {}, HISTORY_NOW);
    const pool = poolBehind(db.prisma)!;
    const exported = (await reports.csv(query))!;
    const [, ...later] = await copiesHeld();
    const ended = await db.sql.query<{ ended: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ended FROM unnest($1::int[]) pid`,
      [later],
    );
    expect(ended.rows.map((row) => row.ended)).toEqual([true, true, true]);
    await expect(text(exported)).rejects.toThrow();
    expect(pool.totalCount - pool.idleCount).toBe(0);
    // The pool goes on: the next export is whole.
    expect(await text((await reports.csv(query))!)).toBe(reportAsCsv(await runReport(reports, query)));
  });
});
