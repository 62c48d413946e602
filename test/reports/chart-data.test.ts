// The data behind the report pages' line charts: one point for every day of the range, days without data at 0,
// so that uPlot never draws a line straight across days that had nothing. The pure function first, then the
// page's inert JSON over the known history (test/reports/known-history.ts), as the browser reads it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseReportQuery } from '../../src/reports/report-query.js';
import type { ReportResult } from '../../src/reports/report-result.js';
import { dayTotalsOf } from '../../src/reports/day-totals.js';
import type { LineChart } from '../../src/web/admin/report-pages.js';
import { everyDay, lineChartOf, MAX_CHART_DAYS } from '../../src/web/admin/report-routes.js';
import { FakeClock } from '../support/sync-harness.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { knownHistoryOptions, scriptKnownHistory, T0, type KnownHistory } from './known-history.js';
import { patient } from '../support/patience.js';

const NOW = new Date('2026-03-10T12:00:00Z');
const days = (chart: LineChart | undefined) =>
  chart?.x.map((s) => new Date(s * 1000).toISOString().slice(0, 10));

function resultWith(rows: Record<string, string | number>[]): ReportResult {
  const figures = ['free_minutes', 'offered_minutes', 'booked_minutes'];
  return { rows, dayTotals: dayTotalsOf(rows, figures) } as unknown as ReportResult;
}

describe('everyDay', () => {
  it('fills the days between the first and the last with data, in order', () => {
    expect(everyDay(undefined, undefined, ['2026-03-04', '2026-03-01', '2026-03-02'])).toEqual([
      '2026-03-01',
      '2026-03-02',
      '2026-03-03',
      '2026-03-04',
    ]);
  });

  it('runs over the whole of a given range, across a month end, and is empty without days or range', () => {
    expect(everyDay('2026-02-27', '2026-03-02', ['2026-02-28'])).toEqual([
      '2026-02-27',
      '2026-02-28',
      '2026-03-01',
      '2026-03-02',
    ]);
    expect(everyDay(undefined, undefined, [])).toEqual([]);
  });

  it('cuts a range too long to draw down to the days with data', () => {
    expect(everyDay('1900-01-01', '2999-12-31', ['2026-03-01', '2026-03-03'])).toHaveLength(3);
    expect(everyDay('2000-01-01', undefined, ['2026-03-01'])).toEqual(['2026-03-01']);
    expect(everyDay('2000-01-01', '2999-01-01', [])).toEqual([]);
    // The longest range drawn whole: MAX_CHART_DAYS points, the first and the last day included.
    const longest = everyDay('2026-01-01', '2036-01-08', []);
    expect(longest).toHaveLength(MAX_CHART_DAYS);
    expect(longest[longest.length - 1]).toBe('2036-01-08');
    expect(everyDay('2026-01-01', '2036-01-09', ['2030-05-05'])).toEqual(['2030-05-05']);
  });
});

describe('lineChartOf', () => {
  it('availability: free minutes summed per day over event types and connections, 0 on days without', () => {
    const query = parseReportQuery('availability', {}, NOW);
    const chart = lineChartOf(
      query,
      resultWith([
        { day: '2026-03-13', free_minutes: 60 },
        { day: '2026-03-10', free_minutes: 30 },
        { day: '2026-03-10', free_minutes: 90 },
      ]),
    );
    expect(days(chart)).toEqual(['2026-03-10', '2026-03-11', '2026-03-12', '2026-03-13']);
    expect(chart?.y).toEqual([120, 0, 0, 60]);
  });

  it('utilization: the booked share per day, 0 on days without offered time, never after the last past day', () => {
    const query = parseReportQuery('utilization', { from: '2026-03-06', to: '2026-03-20' }, NOW);
    const chart = lineChartOf(
      query,
      resultWith([
        { day: '2026-03-07', offered_minutes: 300, booked_minutes: 100 },
        { day: '2026-03-09', offered_minutes: 200, booked_minutes: 0 },
      ]),
    );
    // --to lies in the future: the chart ends with the last day that has data.
    expect(days(chart)).toEqual(['2026-03-06', '2026-03-07', '2026-03-08', '2026-03-09']);
    expect(chart?.y).toEqual([0, 33.3, 0, 0]);
  });

  it('draws no line for the other reports', () => {
    expect(lineChartOf(parseReportQuery('sync-health', {}, NOW), resultWith([]))).toBeUndefined();
  });
});

describe('the report pages’ chart data, over the known history', () => {
  let k: KnownHistory;
  let web: WebHarness;

  beforeAll(async () => {
    const clock = new FakeClock(new Date(T0));
    web = await createWebHarness('chart_data', knownHistoryOptions(clock));
    k = await scriptKnownHistory(web.sync, clock);
  }, patient(60_000));
  afterAll(async () => {
    await web?.close();
  });

  async function chartOn(path: string): Promise<LineChart> {
    const page = await web.get(path, { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'text/html' });
    expect(page.status).toBe(200);
    const json = /<script type="application\/json" id="chart-data">([\s\S]*?)<\/script>/.exec(page.text)?.[1];
    if (json === undefined) throw new Error(`no chart data on ${path}`);
    return JSON.parse(json) as LineChart;
  }

  it('availability over a range wider than the data: every day, the days without free slots at 0', async () => {
    // As of T3 (Mar 30 06:00Z) the Berlin account has free slots on Mar 30 … Apr 2 only.
    const chart = await chartOn(
      `/admin/reports/availability?connection=${k.berlin.connectionId}&from=2026-03-27&to=2026-04-04`,
    );
    expect(days(chart)).toEqual([
      '2026-03-27',
      '2026-03-28',
      '2026-03-29',
      '2026-03-30',
      '2026-03-31',
      '2026-04-01',
      '2026-04-02',
      '2026-04-03',
      '2026-04-04',
    ]);
    expect(chart.y).toEqual([0, 0, 0, 120, 180, 180, 180, 0, 0]);
    expect(chart.x.every((s, i) => i === 0 || s - chart.x[i - 1]! === 86_400)).toBe(true);
  });

  it('utilization over a range wider than the data: the past days without offered time at 0', async () => {
    const chart = await chartOn(
      `/admin/reports/utilization?connection=${k.berlin.connectionId}&from=2026-03-25&to=2026-03-29`,
    );
    expect(days(chart)).toEqual(['2026-03-25', '2026-03-26', '2026-03-27', '2026-03-28', '2026-03-29']);
    expect(chart.y.slice(0, 3)).toEqual([0, 0, 0]);
    expect(chart.y.slice(3).every((share) => share !== null && share > 0)).toBe(true);
  });
});
