// The admin's CSV download of a report (GET /admin/reports/:name/csv): streamed from Postgres into a file before it
// is sent, so a browser that reads it slowly holds no database connection and no statement open (the web role's
// statement timeout would otherwise cut the download off), and what it reads is the report's CSV.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { reportAsCsv } from '../../src/reports/report-format.js';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { poolBehind } from '../../src/store/pooled-rows.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { generateMixedHistory, HISTORY_NOW } from '../reports/mixed-history.js';

let web: WebHarness;

/**
 * A year of stored days for 1,000 more connections, so that the CSV (some 27 MB) is far more than a socket takes
 * in while its reader waits: sent as Postgres writes it, the export would still be running when the headers came.
 */
async function addStoredYear(): Promise<void> {
  const { sql } = web.sync.db;
  await sql.query(
    `INSERT INTO connection (id, upstream_user_id, email, status, first_synced_at, updated_at)
     SELECT md5('download ' || i)::uuid, 'usr_download_' || i, 'download' || i || '@example.test', 'active',
            $1::timestamptz - interval '400 days', now()
     FROM generate_series(1, 1000) i`,
    [HISTORY_NOW],
  );
  await sql.query(
    `INSERT INTO report_days_stored (connection_id, zone, through)
     SELECT id, 'UTC', '2026-09-19' FROM connection WHERE email LIKE 'download%'`,
  );
  await sql.query(
    `INSERT INTO utilization_day (connection_id, day, offered_minutes, bookings, booked_minutes)
     SELECT c.id, d::date, 480, 3, 90 + (extract(doy FROM d)::int % 7) * 1.5
     FROM connection c, generate_series('2025-09-20'::date, '2026-09-19'::date, interval '1 day') d
     WHERE c.email LIKE 'download%'`,
  );
}

beforeAll(async () => {
  web = await createWebHarness('report_download');
  await generateMixedHistory(web.sync.db.prisma);
  await addStoredYear();
}, 120_000);

afterAll(async () => {
  await web?.close();
});

/** The response's status and headers, its body not yet read (node:http leaves it waiting until it is). */
function headersOf(url: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }, resolve).on('error', reject);
  });
}

async function bodyOf(response: http.IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of response) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

describe('the admin’s CSV download', () => {
  it('holds no database connection while the browser has yet to read it, then sends the report’s CSV', async () => {
    const at = HISTORY_NOW.toISOString();
    const response = await headersOf(`${web.url}/admin/reports/utilization/csv?at=${encodeURIComponent(at)}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    // Nothing of the body read yet: the report was read whole from Postgres before the headers were sent.
    const pool = poolBehind(web.sync.clients.prisma)!;
    expect(pool.totalCount - pool.idleCount).toBe(0);
    const copies = await web.sync.db.sql.query<{ n: number }>(
      `SELECT COUNT(*)::int AS n FROM pg_stat_activity
       WHERE query LIKE 'COPY (%' AND state <> 'idle' AND datname = current_database()`,
    );
    expect(copies.rows[0]!.n).toBe(0);
    const csv = await bodyOf(response);
    const query = parseReportQuery('utilization', { at }, HISTORY_NOW);
    const expected = reportAsCsv(await runReport(web.deps.reports, query));
    expect(expected.split('\r\n').length).toBeGreaterThan(365_000);
    expect(csv).toBe(expected);
  });

  it('answers a query it cannot run (a zone that does not exist) with 400 and what to give instead', async () => {
    const response = await headersOf(`${web.url}/admin/reports/utilization/csv?tz=Mars%2FOlympus_Mons`);
    expect(response.statusCode).toBe(400);
    expect(await bodyOf(response)).toContain('Mars/Olympus_Mons');
  });
});
