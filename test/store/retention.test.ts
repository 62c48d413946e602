// Retention over a generated history: 200 days of daily syncs of one connection, slots booked and new ones
// offered every day, and a failed attempt every fifth day. Pruning with 90 days of runs and 120 of closed slots
// removes exactly the rows past those ages, in batches; what the reports answer over the retained range is
// unchanged; the pruned runs are in the daily rollup; the feed's bytes and validators do not move; and a sync
// committed while pruning runs commits normally.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { REPORT_NAMES, type ReportQuery } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { createReportStore } from '../../src/store/reports.js';
import { pruneHistory } from '../../src/store/retention.js';
import { commitSuccessfulSync, recordFailedSync, type SnapshotInput } from '../../src/store/snapshots.js';
import type { FetchedSlot } from '../../src/store/slot-diff.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import type { FakeClock } from '../support/sync-harness.js';

const DAYS = 200;
const DAY_MS = 86_400_000;
const SETTINGS = { syncRunDays: 90, closedSlotDays: 120, batchSize: 50 };

let h: WebHarness;
let connectionId: string;
let token: string;
const clock = () => h.sync.clock as FakeClock;
const prisma = () => h.sync.db.prisma;

/** Day d's offer: eight half-hour slots on each of the next three days, 09:00 UTC on. */
function slotsOn(day: number, start: number): FetchedSlot[] {
  const slots: FetchedSlot[] = [];
  for (let ahead = 1; ahead <= 3; ahead++) {
    for (let half = 0; half < 8; half++) {
      // Each day a different slot of tomorrow is gone (booked).
      if (ahead === 1 && half === day % 8) continue;
      const startsAt = new Date(start + (day + ahead) * DAY_MS + 9 * 3_600_000 + half * 1_800_000);
      slots.push({ eventId: 'evt_retained', startsAt, endsAt: new Date(startsAt.getTime() + 1_800_000) });
    }
  }
  return slots;
}

const snapshotOf = (slots: FetchedSlot[]): SnapshotInput => ({
  profile: { payload: { name: 'Ret' }, email: 'ret@example.test', name: 'Retained History', timezone: 'UTC' },
  eventTypes: [
    {
      upstreamEventId: 'evt_retained',
      title: 'Call',
      durationMinutes: 30,
      enabled: true,
      secret: false,
      url: null,
      color: null,
      payload: { event_id: 'evt_retained' },
    },
  ],
  overviews: [],
  slots,
});

const run = (at: Date) => ({
  id: randomUUID(),
  jobId: null,
  attempt: 1,
  startedAt: at,
  callsByEndpoint: { 'GET /events': 3 },
});

function commitDay(day: number, start: number) {
  const now = clock().now();
  return commitSuccessfulSync(prisma(), {
    connectionId,
    snapshot: snapshotOf(slotsOn(day, start)),
    run: run(new Date(now.getTime() - 2000)),
    now,
    next: now,
  });
}

/**
 * Every report over the last 60 days (all inside both ages), as its rows, as of just before now: the sync
 * committed during pruning (at now) is not part of what is compared.
 */
async function reportsOverRetainedRange() {
  const at = new Date(clock().now().getTime() - 5000);
  const to = at.toISOString().slice(0, 10);
  const from = new Date(at.getTime() - 60 * DAY_MS).toISOString().slice(0, 10);
  const results: Record<string, unknown> = {};
  for (const report of REPORT_NAMES) {
    const query: ReportQuery = { report, from, to, at, atGiven: true, timezone: 'UTC', by: 'day' };
    results[report] = (await runReport(createReportStore(prisma()), query)).rows;
  }
  return results;
}

/**
 * What sync-health counts over `from`…`to` (UTC days), as of just before now: runs and their outcomes, and
 * upstream calls per run. Durations, staleness and errors are per run and go with the runs.
 */
async function syncCounts(from: string, to: string) {
  const at = new Date(clock().now().getTime() - 5000);
  const query: ReportQuery = {
    report: 'sync-health',
    from,
    to,
    at,
    atGiven: true,
    timezone: 'UTC',
    by: 'day',
  };
  const [row] = (await runReport(createReportStore(prisma()), { ...query, connectionId })).rows;
  return {
    runs: row?.runs,
    success_rate: row?.success_rate,
    superseded: row?.superseded,
    interrupted: row?.interrupted,
    calls_per_run: row?.calls_per_run,
  };
}

beforeAll(async () => {
  h = await createWebHarness('store_retention');
  const connection = await prisma().connection.create({
    data: { upstreamUserId: `usr_${randomUUID()}`, email: 'ret@example.test', timezone: 'UTC' },
  });
  connectionId = connection.id;
  token = (await h.feeds.create({ connectionId })).token;
  const start = clock().now().getTime();
  for (let day = 0; day < DAYS; day++) {
    await commitDay(day, start);
    if (day % 5 === 0) {
      const now = clock().now();
      await recordFailedSync(prisma(), {
        connectionId,
        run: run(new Date(now.getTime() - 1000)),
        now,
        error: { code: 'upstream_5xx', message: 'GET /events answered 503' },
      });
    }
    clock().advance(DAY_MS / 1000);
  }
});
afterAll(async () => {
  await h?.close();
});

describe('pruning a generated history', () => {
  it('removes exactly what is past its age, keeps the reports over the retained range, and the feed', async () => {
    const now = clock().now();
    const runCutoff = new Date(now.getTime() - SETTINGS.syncRunDays * DAY_MS);
    const slotCutoff = new Date(now.getTime() - SETTINGS.closedSlotDays * DAY_MS);
    const oldRuns = await prisma().syncRun.groupBy({
      by: ['outcome'],
      where: { connectionId, startedAt: { lt: runCutoff } },
      _count: { _all: true },
      _sum: { upstreamCalls: true },
    });
    const oldSlots = await prisma().slot.count({ where: { connectionId, goneAt: { lt: slotCutoff } } });
    const keptRuns = await prisma().syncRun.count({ where: { connectionId, startedAt: { gte: runCutoff } } });
    const keptSlots = await prisma().slot.count({
      where: { connectionId, OR: [{ goneAt: null }, { goneAt: { gte: slotCutoff } }] },
    });
    expect(oldRuns.reduce((n, g) => n + g._count._all, 0)).toBeGreaterThan(SETTINGS.batchSize);
    expect(oldSlots).toBeGreaterThan(SETTINGS.batchSize);

    const reportsBefore = await reportsOverRetainedRange();
    // Over days whose runs are all pruned, and over the whole history, sync-health counts the same after.
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const prunedRange = [day(now.getTime() - 150 * DAY_MS), day(now.getTime() - 120 * DAY_MS)] as const;
    const wholeRange = [day(now.getTime() - DAYS * DAY_MS), day(now.getTime())] as const;
    const prunedBefore = await syncCounts(...prunedRange);
    const wholeBefore = await syncCounts(...wholeRange);
    // Days 50 to 80 of the history: 31 syncs, and a failed attempt on each fifth day (50, 55, …, 80).
    expect(prunedBefore).toMatchObject({ runs: 38, success_rate: 0.8158 });
    const feedBefore = await h.get(`/feeds/${token}.ics`);
    const versionBefore = (await prisma().connection.findUniqueOrThrow({ where: { id: connectionId } }))
      .feedVersion;

    // A sync commits while pruning runs.
    let pauses = 0;
    const [pruned, committed] = await Promise.all([
      pruneHistory(prisma(), SETTINGS, {
        now,
        pause: async () => {
          pauses += 1;
        },
      }),
      commitDay(DAYS, now.getTime() - DAYS * DAY_MS),
    ]);
    expect(committed.superseded).toBe(false);
    expect(pruned.syncRuns).toBe(oldRuns.reduce((n, g) => n + g._count._all, 0));
    expect(pruned.closedSlots).toBe(oldSlots);
    expect(pauses).toBeGreaterThan(2);

    expect(await prisma().syncRun.count({ where: { connectionId, startedAt: { lt: runCutoff } } })).toBe(0);
    expect(await prisma().slot.count({ where: { goneAt: { lt: slotCutoff } } })).toBe(0);
    expect(await prisma().syncRun.count({ where: { connectionId } })).toBe(keptRuns + 1);
    expect(
      await prisma().slot.count({
        where: { connectionId, OR: [{ goneAt: null }, { goneAt: { gte: slotCutoff } }] },
      }),
    ).toBeGreaterThanOrEqual(keptSlots);

    // The rollup holds what went, per outcome.
    const rolled = await prisma().syncRunDaily.groupBy({
      by: ['outcome'],
      where: { connectionId },
      _sum: { runs: true, upstreamCalls: true },
    });
    for (const group of oldRuns) {
      const sum = rolled.find((r) => r.outcome === group.outcome)!._sum;
      expect([group.outcome, sum.runs]).toEqual([group.outcome, group._count._all]);
      expect(Number(sum.upstreamCalls)).toBe(group._sum.upstreamCalls);
    }

    // Reports over the retained range, as of the same instant, are the same.
    expect(await reportsOverRetainedRange()).toEqual(reportsBefore);
    // And sync-health over pruned days reads the rollup: the same runs, outcomes and calls.
    expect(await syncCounts(...prunedRange)).toEqual(prunedBefore);
    expect(await syncCounts(...wholeRange)).toEqual(wholeBefore);

    // The sync committed above moved the feed; pruning did not move it again.
    const versionAfter = (await prisma().connection.findUniqueOrThrow({ where: { id: connectionId } }))
      .feedVersion;
    expect(versionAfter).toBe(versionBefore + 1);
    await h.deps.feedChanges.caughtUp();
    expect((await h.get(`/feeds/${token}.ics`)).status).toBe(200);
    expect(feedBefore.status).toBe(200);
  });

  it('with nothing past its age, prunes nothing; an age of 0 keeps everything', async () => {
    const again = await pruneHistory(prisma(), SETTINGS, {
      now: clock().now(),
      pause: async () => undefined,
    });
    expect(again).toMatchObject({ syncRuns: 0, closedSlots: 0, syncRunDays: 0, closedSlotDays: 0 });
    // Its only batches: the report days of the connection whose row the sync's commit held during the run above
    // (skipped then, store/report-days.ts), stored now, if any; and the sync-health day so far of every connection
    // with days stored, counted at the end of every run (store/sync-health-so-far.ts), fifty a batch.
    expect(again.batches).toBe(
      (again.reportDaysStored > 0 ? 1 : 0) + Math.ceil(again.daysSoFarCounted / SETTINGS.batchSize),
    );
    const runs = await prisma().syncRun.count();
    const kept = await pruneHistory(
      prisma(),
      { syncRunDays: 0, closedSlotDays: 0, batchSize: 10 },
      { now: new Date(clock().now().getTime() + 10_000 * DAY_MS) },
    );
    // Deletes nothing; the days over by then are stored for the reports, and the days so far counted after them:
    // the pass's only batches (a connection each, catching up; then ten connections a batch).
    expect(kept).toMatchObject({ syncRuns: 0, closedSlots: 0, syncRunDays: 0, closedSlotDays: 0 });
    expect(kept.reportDaysStored).toBeGreaterThan(0);
    expect(kept.batches).toBe((await prisma().connection.count()) + Math.ceil(kept.daysSoFarCounted / 10));
    expect(await prisma().syncRun.count()).toBe(runs);
  });
});
