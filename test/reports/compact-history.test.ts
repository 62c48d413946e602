// Every report answers the same over history kept row by row and packed (issue 43): one generated history (four
// connections in zones a whole, half and quarter hour off UTC and one without a zone, three event types with a
// renamed one, slots booked, reopened, disabled, passed and still open, runs of every outcome with errors and
// staleness, bookings inferred as commits infer them) is read by every report (each kind, each bookings
// grouping, each format, over every scope the CLI and admin pages offer: all or one connection, an event type,
// local days, a past instant, another zone) before and after the compaction packs it, and by the admin page's
// reads of the same history. The lists of reports, groupings and formats are the code's own, so a new one is
// run here too.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { REPORT_FORMATS, formatReport } from '../../src/reports/report-format.js';
import {
  BOOKINGS_GROUPINGS,
  REPORT_NAMES,
  parseReportQuery,
  type RawReportQuery,
  type ReportName,
} from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { createConnectionDetailStore } from '../../src/store/connection-detail.js';
import { createReportStore } from '../../src/store/reports.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';

const DAY_MS = 86_400_000;
let db: TestDatabase;
let ids: { connections: string[]; eventId: string };

interface Case {
  name: ReportName;
  label: string;
  raw: RawReportQuery;
}

/** Every report, grouping and scope the CLI and admin pages offer, over this history. */
function cases(): Case[] {
  const [berlin, kolkata] = ids.connections;
  const scopes: [string, RawReportQuery][] = [
    ['all connections', {}],
    ['one connection', { connection: berlin }],
    ['another connection, another zone', { connection: kolkata, tz: 'Asia/Kathmandu' }],
    ['local days', { from: '2026-08-10', to: '2026-09-05' }],
    ['a past instant', { at: '2026-09-01T07:13:21.456Z' }],
    [
      'a past instant, days and zone',
      { at: '2026-09-12T23:59:59.999Z', from: '2026-08-30', tz: 'Pacific/Chatham' },
    ],
    ['an event type', { event: ids.eventId }],
    ['days after the packed ones', { from: '2026-09-19' }],
  ];
  const all: Case[] = [];
  for (const name of REPORT_NAMES) {
    for (const [label, raw] of scopes) {
      if (name === 'sync-health' && raw.event !== undefined) continue; // --event does not apply to it
      const groupings = name === 'bookings' ? BOOKINGS_GROUPINGS : [undefined];
      for (const by of groupings)
        all.push({ name, label: by ? `${label}, --by ${by}` : label, raw: { ...raw, by } });
    }
  }
  return all;
}

/** Each case's report in every format, and the admin page's reads of the same history. */
async function answers(): Promise<Map<string, string>> {
  const reports = createReportStore(db.prisma);
  const out = new Map<string, string>();
  for (const c of cases()) {
    const result = await runReport(reports, parseReportQuery(c.name, c.raw, HISTORY_NOW));
    for (const format of REPORT_FORMATS)
      out.set(`${c.name}, ${c.label}, ${format}`, formatReport(result, format, 200));
  }
  const heatMap = await reports.bookingsByWeekdayHour({ at: HISTORY_NOW });
  out.set('bookings heat map', JSON.stringify(heatMap));
  const detail = createConnectionDetailStore(db.prisma);
  for (const id of ids.connections) {
    out.set(`${id} open slots by day`, JSON.stringify(await detail.openSlotsByDay(id, HISTORY_NOW, 28)));
    out.set(
      `${id} calls in the last day`,
      JSON.stringify(await detail.callsByEndpointSince(id, new Date(HISTORY_NOW.getTime() - DAY_MS))),
    );
  }
  return out;
}

beforeAll(async () => {
  db = await createTestDatabase('compact_history');
  ids = await generateMixedHistory(db.prisma);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

describe('history packed into the form reports read', () => {
  it('answers every report, grouping and format as the rows did', async () => {
    const rowByRow = await answers();
    const before = {
      slots: await db.prisma.slot.count(),
      runs: await db.prisma.syncRun.count(),
    };
    // Two passes, ten days apart, so later closes are appended to days packed already; a connection a batch.
    const earlier = await pruneHistory(
      db.prisma,
      { syncRunDays: 0, closedSlotDays: 0, compactAfterDays: 1, batchSize: 1 },
      { now: new Date(HISTORY_NOW.getTime() - 10 * DAY_MS), pause: async () => undefined },
    );
    const now = await pruneHistory(
      db.prisma,
      { syncRunDays: 0, closedSlotDays: 0, compactAfterDays: 1, batchSize: 1 },
      { now: HISTORY_NOW, pause: async () => undefined },
    );
    // Most of the history moved: what is left row by row is open slots and the last day or two.
    expect(earlier.packedSlots).toBeGreaterThan(0);
    expect(now.packedSlots).toBeGreaterThan(0);
    const packedSlots = earlier.packedSlots + now.packedSlots;
    const packedRuns = earlier.packedSyncRuns + now.packedSyncRuns;
    expect(packedSlots).toBe(before.slots - (await db.prisma.slot.count()));
    expect(packedSlots / before.slots).toBeGreaterThan(0.6);
    expect(packedRuns / before.runs).toBeGreaterThan(0.9);
    expect(await db.prisma.slotHistory.count()).toBeGreaterThan(0);

    const packed = await answers();
    expect([...packed.keys()]).toEqual([...rowByRow.keys()]);
    const differing = [...rowByRow].filter(([key, text]) => packed.get(key) !== text).map(([key]) => key);
    expect(differing).toEqual([]);
    // Not vacuous: the reports have rows to compare.
    expect(rowByRow.get('utilization, all connections, csv')?.split('\n').length).toBeGreaterThan(100);
    expect(rowByRow.get('sync-health, all connections, json')).toContain('"p95_seconds"');
  }, 300_000);
});
