// A report of more rows than the admin page's table lists: over every connection for a year, a report is millions
// of rows, and a table of them was a page of a gigabyte or more, past what Node can hold as one string. The table
// lists the first TABLE_ROWS_SHOWN in the report's order and says how many there are and where the rest are;
// the summary and chart still count every row. Thirty connections' forty days of utilization here, over 1,000 rows,
// and two weeks of their slots ahead.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { createReportStore } from '../../src/store/reports.js';
import { createBesideBudget } from '../../src/store/report-queries/report-session.js';
import { formatValue } from '../../src/reports/report-format.js';
import { TABLE_ROWS_SHOWN } from '../../src/web/admin/report-pages.js';
import { generatePackedSlots } from '../support/packed-slots.js';
import { patient } from '../support/patience.js';
import { FakeClock } from '../support/sync-harness.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';

const NOW = new Date('2026-09-20T12:00:00Z');
let web: WebHarness;

beforeAll(async () => {
  web = await createWebHarness('report_table_cut', { clock: new FakeClock(NOW) });
  // Two bookings a connection-day, seen through the forty days: 2,400 bookings, 1,200 days with some.
  await generatePackedSlots(web.sync.db, { connections: 30, days: 40, now: NOW, bookingsPerDay: 2 });
  // Their event types, for reports of one (--event).
  await web.sync.db.prisma.$executeRaw`
    INSERT INTO event_type (connection_id, upstream_event_id, title, duration_minutes, enabled, content_hash, payload,
                            valid_from)
    SELECT c.id, 'evt_' || e, 'Meeting ' || e, 30, true, 'hash', '{}'::jsonb, ${NOW}::timestamptz - interval '90 days'
    FROM connection c, generate_series(1, 3) e`;
  // And two weeks ahead still open, seen yesterday: 1,260 availability rows at NOW (30 × 3 event types × 14 days).
  await web.sync.db.prisma.$executeRaw`
    INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at)
    SELECT c.id, 'evt_' || e, g, g + interval '30 minutes', ${NOW}::timestamptz - interval '1 day',
           ${NOW}::timestamptz - interval '1 day'
    FROM connection c, generate_series(1, 3) e,
         generate_series(${NOW}::timestamptz + interval '1 day', ${NOW}::timestamptz + interval '14 days 23 hours',
                         interval '2 hours') g`;
}, patient(60_000));
afterAll(async () => {
  await web?.close();
});

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const tableRows = (page: string) => [...page.matchAll(/<tr role="row">\s*<td/g)].length;
const text = (page: string) => page.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');

describe('a report of more rows than the page lists', () => {
  it('lists the first rows in the report order, says how many there are, and totals every row', async () => {
    const report = await runReport(web.deps.reports, parseReportQuery('utilization', {}, NOW));
    expect(report.rows.length).toBeGreaterThan(TABLE_ROWS_SHOWN);

    const response = await web.get('/admin/reports/utilization', auth);
    expect(response.status).toBe(200);
    expect(tableRows(response.text)).toBe(TABLE_ROWS_SHOWN);
    const shown = text(response.text);
    expect(shown).toContain(
      `The table lists the first ${TABLE_ROWS_SHOWN.toLocaleString('en-US')} of ${report.rows.length.toLocaleString('en-US')} rows`,
    );
    expect(response.text).toMatch(
      /id="report-rows-cut"[^]*<a href="\/admin\/reports\/utilization\/csv" download>the CSV<\/a>/,
    );
    // The last row listed is the report's row at that place: its day and connection, in order.
    const last = report.rows[TABLE_ROWS_SHOWN - 1]!;
    const lastRow = [...response.text.matchAll(/<tr role="row">([^]*?)<\/tr>/g)].at(-1)![1]!;
    const cells = [...lastRow.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((cell) => cell[1]);
    expect(cells.slice(0, 2)).toEqual([String(last.connection), String(last.day)]);
    // The totals are the whole report's, not the listed rows'.
    const offered = report.summary.find((s) => s.key === 'offered_minutes')!;
    expect(shown).toContain(`offered minutes: ${formatValue(offered.value, offered.kind)}`);
  });

  it('lists every row, and says nothing of a cut, where the report has no more than that', async () => {
    const one = await web.sync.db.prisma.connection.findFirstOrThrow({ select: { id: true } });
    const report = await runReport(
      web.deps.reports,
      parseReportQuery('utilization', { connection: one.id }, NOW),
    );
    expect(report.rows.length).toBeGreaterThan(0);
    expect(report.rows.length).toBeLessThan(TABLE_ROWS_SHOWN);
    const response = await web.get(`/admin/reports/utilization?connection=${one.id}`, auth);
    expect(tableRows(response.text)).toBe(report.rows.length);
    expect(response.text).not.toContain('report-rows-cut');
  });

  // By booking, day or week the bookings report reads only the rows the page lists, and counts the rest: over every
  // connection for a year, 3.57 million days (6.2 million bookings) read to list a thousand.
  it.each(['booking', 'day', 'week'] as const)(
    "bookings by %s: the first rows read are the whole report's, with its row count and its summary",
    async (by) => {
      const query = parseReportQuery('bookings', { by }, NOW);
      const whole = await runReport(web.deps.reports, query);
      const firstRows = await runReport(web.deps.reports, query, { firstRows: TABLE_ROWS_SHOWN });
      expect(firstRows.rows).toEqual(whole.rows.slice(0, TABLE_ROWS_SHOWN));
      expect(firstRows.rowCount).toBe(whole.rows.length);
      expect(firstRows.summary).toEqual(whole.summary);
      expect(whole.rows.length).toBeGreaterThan(by === 'week' ? 0 : TABLE_ROWS_SHOWN);

      const page = await web.get(`/admin/reports/bookings?by=${by}`, auth);
      expect(page.status).toBe(200);
      expect(tableRows(page.text)).toBe(Math.min(TABLE_ROWS_SHOWN, whole.rows.length));
      if (whole.rows.length > TABLE_ROWS_SHOWN) {
        expect(text(page.text)).toContain(
          `of ${whole.rows.length.toLocaleString('en-US')} rows, in the report's order`,
        );
      } else {
        expect(page.text).not.toContain('report-rows-cut');
      }
      const opened = whole.summary.find((item) => item.key === 'opened');
      if (opened)
        expect(text(page.text)).toContain(`opened slots: ${formatValue(opened.value, opened.kind)}`);
    },
  );

  // By booking, the first rows are read a connection at a time in the connections' order (never every booking sorted),
  // and the row count is the summary's count of bookings: both must hold in every scope a report can be asked for.
  it.each([
    [{ from: '2026-08-25', to: '2026-09-06' }, 100],
    [{ tz: 'Pacific/Kiritimati' }, TABLE_ROWS_SHOWN],
    [{ at: '2026-09-01T06:30:00Z' }, TABLE_ROWS_SHOWN],
    [{ event: 'evt_1', from: '2026-09-10' }, 100],
    [{ event: 'evt_2' }, 100],
  ] as const)(
    'bookings by booking %j: its first %d rows and its count are the whole report’s',
    async (raw, shown) => {
      const query = parseReportQuery('bookings', { by: 'booking', ...raw }, NOW);
      const whole = await runReport(web.deps.reports, query);
      const firstRows = await runReport(web.deps.reports, query, { firstRows: shown });
      expect(firstRows.rows).toEqual(whole.rows.slice(0, shown));
      expect(firstRows.rowCount).toBe(whole.rows.length);
      expect(firstRows.summary).toEqual(whole.summary);
      if (!('event' in raw && raw.event === 'evt_2')) expect(whole.rows.length).toBeGreaterThan(shown);
    },
  );

  // Availability and utilization read only the page's rows too, and sum every row per day in Postgres for the
  // chart, the summary and the count: read whole, a year of every connection's was millions of rows (docs/reports.md).
  // In the connections' own zones the report reads stored days and the days after them, each part in order, for
  // Postgres to merge; in another zone (--tz) every day is worked out and put in order by rank.
  it.each([
    ['availability', {}, TABLE_ROWS_SHOWN],
    ['availability', { tz: 'America/New_York' }, TABLE_ROWS_SHOWN],
    // Five days back: its days read from those stored, a few hundred rows, of which a page of 100.
    ['availability', { at: '2026-09-15T12:00:00Z' }, 100],
    ['utilization', {}, TABLE_ROWS_SHOWN],
    ['utilization', { tz: 'America/New_York' }, TABLE_ROWS_SHOWN],
  ] as const)(
    "%s %j: the first %d rows read are the whole report's, with its row count, summary and every day's totals",
    async (name, raw, shown) => {
      const query = parseReportQuery(name, { ...raw }, NOW);
      const whole = await runReport(web.deps.reports, query);
      const firstRows = await runReport(web.deps.reports, query, { firstRows: shown });
      expect(whole.rows.length).toBeGreaterThan(shown);
      expect(firstRows.rows).toEqual(whole.rows.slice(0, shown));
      expect(firstRows.rowCount).toBe(whole.rows.length);
      expect(firstRows.summary).toEqual(whole.summary);
      const byDay = (result: typeof whole) =>
        [...(result.dayTotals ?? [])].sort((a, b) => (a.day < b.day ? -1 : 1));
      expect(byDay(firstRows)).toEqual(byDay(whole));
      expect(byDay(whole).length).toBeGreaterThan(3);
    },
  );

  // Availability's day totals over many connections are read in parts at once, by runs of connections, and added
  // up by day (first-rows.ts): here in two and in three parts of the thirty connections.
  it.each([
    [2, {}],
    [3, { at: '2026-09-15T12:00:00Z' }],
    [2, { tz: 'America/New_York' }],
  ] as const)(
    'availability in %d parts %j: the same rows, count, summary and day totals',
    async (atOnce, raw) => {
      const inParts = createReportStore(
        web.sync.db.prisma,
        { atOnce, fewestConnections: 1, aheadBytes: 1 },
        createBesideBudget(atOnce, patient(1_000)),
      );
      const query = parseReportQuery('availability', { ...raw }, NOW);
      const whole = await runReport(web.deps.reports, query);
      const read = await runReport(inParts, query, { firstRows: 100 });
      expect(read.rows).toEqual(whole.rows.slice(0, 100));
      expect(read.rowCount).toBe(whole.rows.length);
      expect(read.summary).toEqual(whole.summary);
      const byDay = (result: typeof whole) =>
        [...(result.dayTotals ?? [])].sort((a, b) => (a.day < b.day ? -1 : 1));
      expect(byDay(read)).toEqual(byDay(whole));
      expect(byDay(whole).length).toBeGreaterThan(3);
    },
  );

  it.each(['availability', 'utilization'] as const)(
    "the %s page's chart and totals count every row, its table the first",
    async (name) => {
      const whole = await runReport(web.deps.reports, parseReportQuery(name, {}, NOW));
      const page = await web.get(`/admin/reports/${name}`, auth);
      expect(page.status).toBe(200);
      expect(tableRows(page.text)).toBe(TABLE_ROWS_SHOWN);
      expect(text(page.text)).toContain(
        `of ${whole.rows.length.toLocaleString('en-US')} rows, in the report's order`,
      );
      for (const item of whole.summary) {
        expect(text(page.text)).toContain(`${item.label}: ${formatValue(item.value, item.kind)}`);
      }
      // Each day's point as the whole report's rows give it: availability's free minutes, utilization's booked share.
      const chart = JSON.parse(
        /<script type="application\/json" id="chart-data">([\s\S]*?)<\/script>/.exec(page.text)![1]!,
      ) as { x: number[]; y: number[] };
      const sumOn = (day: string, key: string) =>
        whole.rows.filter((row) => row.day === day).reduce((sum, row) => sum + Number(row[key]), 0);
      const expected = (day: string) => {
        if (name === 'availability') return sumOn(day, 'free_minutes');
        const offered = sumOn(day, 'offered_minutes');
        return offered === 0 ? 0 : Math.round((1000 * sumOn(day, 'booked_minutes')) / offered) / 10;
      };
      const chartDays = chart.x.map((seconds) => new Date(seconds * 1000).toISOString().slice(0, 10));
      expect(new Set(chartDays)).toEqual(new Set(whole.rows.map((row) => String(row.day))));
      chartDays.forEach((day, i) => expect(chart.y[i]).toBeCloseTo(expected(day), 2));
    },
  );
});
