// Every report answers the same over history kept row by row and packed (issue 43): one generated history (four
// connections in zones a whole, half and quarter hour off UTC and one without a zone, three event types with a
// renamed one, slots booked, reopened, disabled, passed and still open, runs of every outcome with errors and
// staleness, bookings inferred as commits infer them) is read by every report (each kind, each bookings
// grouping, each format, over every scope the CLI and admin pages offer: all or one connection, an event type,
// local days, a past instant, another zone: report-answers.ts) before and after the compaction packs it, and by
// the admin page's reads of the same history.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';
import { allReportAnswers, differingAnswers } from './report-answers.js';

const DAY_MS = 86_400_000;
let db: TestDatabase;
let ids: { connections: string[]; eventId: string };

beforeAll(async () => {
  db = await createTestDatabase('compact_history');
  ids = await generateMixedHistory(db.prisma);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

describe('history packed into the form reports read', () => {
  it('answers every report, grouping and format as the rows did', async () => {
    const rowByRow = await allReportAnswers(db.prisma, ids);
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

    const packed = await allReportAnswers(db.prisma, ids);
    expect([...packed.keys()]).toEqual([...rowByRow.keys()]);
    const differing = differingAnswers(rowByRow, packed);
    expect(differing).toEqual([]);
    // Not vacuous: the reports have rows to compare.
    expect(rowByRow.get('utilization, all connections, csv')?.split('\n').length).toBeGreaterThan(100);
    expect(rowByRow.get('sync-health, all connections, json')).toContain('"p95_seconds"');
  }, 300_000);
});
