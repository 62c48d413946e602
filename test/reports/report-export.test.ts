// Reports as CSV streamed from Postgres (store/report-queries/csv-export.ts): for every report, grouping and scope
// (report-answers.ts), the CSV the CLI and the admin's download write is byte for byte the one formatted from the
// report's rows (reportAsCsv), over a history computed from its rows and over one whose past days are stored, with
// connection names that need quoting (commas, quotes, a line break) or are empty. A download left unread gives
// its connection back, and a failing statement is an error before anything is written.
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli/program.js';
import { reportAsCsv } from '../../src/reports/report-format.js';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { runReport, runReportCsv } from '../../src/reports/run-report.js';
import { poolBehind } from '../../src/store/pooled-rows.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createReportStore } from '../../src/store/reports.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
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

/** The cases streamed from Postgres: availability's, utilization's and bookings' by day, week and booking. */
const STREAMED_CASES = () =>
  reportCases(ids).filter(
    (c) =>
      c.name === 'availability' ||
      c.name === 'utilization' ||
      (c.name === 'bookings' && ['day', 'week', 'booking'].includes(c.raw.by ?? '')),
  ).length;

/** Each case whose CSV differs from its rows' and how many cases were streamed from Postgres at all. */
async function compareEveryCase(): Promise<{ differing: string[]; streamed: number; rows: number }> {
  const reports = createReportStore(db.prisma);
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
      const exported = (await reports.csv(query))!;
      if (i % 2 === 0) {
        // Dropped after its first chunk: a download whose reader went away.
        for await (const chunk of exported) {
          expect(chunk.length).toBeGreaterThan(0);
          break;
        }
      } else {
        // Dropped before anything was read: the admin's reply stream destroyed at once.
        const body = Readable.from(exported);
        body.destroy();
        await finished(body).catch(() => undefined);
      }
      // None is still held by the export left behind.
      expect(pool.totalCount - pool.idleCount).toBe(0);
    }
    // More than the pool's 10 connections were opened and left, and one more export runs.
    const csv = await text((await reports.csv(query))!);
    expect(csv).toBe(reportAsCsv(await runReport(reports, query)));
    const copies = await db.sql.query<{ n: number }>(
      `SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'COPY (%' AND state <> 'idle'`,
    );
    expect(copies.rows[0]!.n).toBe(0);
  });
});
