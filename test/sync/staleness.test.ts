// How stale a stored change may have been: a slot booked in the simulator between two syncs reaches the store
// at the second, and the change happened after the first. The metric records, per change and by how far ahead
// the slot is, that bound (second sync − first), which is never less than the true staleness (second sync −
// the booking's own time, known here because the test books it). With partial syncs the bound runs from the
// last pull of the changed slot's date, not from the previous sync, whichever bands that pulled.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runReport } from '../../src/reports/run-report.js';
import { createReportStore } from '../../src/store/reports.js';
import { dateBandOf } from '../../src/lib/date-bands.js';
import { syncConnection } from '../../src/sync/sync-connection.js';
import type { FakeClock } from '../support/sync-harness.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let connectionId: string;
const clock = () => h.sync.clock as FakeClock;

async function observations(band: string): Promise<{ count: number; sum: number }> {
  const metric = await h.sync.clients.metrics.changeStalenessBound.get();
  const value = (name: string) =>
    metric.values.find((v) => v.metricName === name && v.labels.band === band)?.value ?? 0;
  return {
    count: value('slotfeed_change_staleness_bound_seconds_count'),
    sum: value('slotfeed_change_staleness_bound_seconds_sum'),
  };
}

beforeAll(async () => {
  h = await createWebHarness('sync_staleness');
  connectionId = (await h.connectViaWeb(h.sync.sim.users[0]!.email)).connectionId;
  await h.syncNow(connectionId);
});
afterAll(async () => {
  await h?.close();
});

describe('the staleness bound of stored changes', () => {
  it('a first sync records none: nothing it found had been seen before', async () => {
    for (const band of ['0-24h', '1-3d', '3-7d', '7d+']) expect((await observations(band)).count).toBe(0);
  });

  it('a booking between two syncs is recorded in its band, as the time between the syncs', async () => {
    clock().advance(15 * 60);
    const bookedAt = clock().now();
    const slot = await h.sync.db.prisma.slot.findFirstOrThrow({
      where: { connectionId, goneAt: null, startsAt: { gt: new Date(bookedAt.getTime() + 30 * 3_600_000) } },
      orderBy: { startsAt: 'asc' },
    });
    h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
    clock().advance(10 * 60);
    const before = (await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } }))
      .lastGoodSyncAt!;
    await h.syncNow(connectionId);
    const storedAt = (await h.sync.db.prisma.slot.findFirstOrThrow({ where: { id: slot.id } })).goneAt!;
    const band = dateBandOf(slot.startsAt, storedAt);
    expect(band).toBe('1-3d');
    const seen = await observations(band);
    // One event type's slot was booked; others of the same start may have closed with it (the same person).
    expect(seen.count).toBeGreaterThanOrEqual(1);
    const bound = (storedAt.getTime() - before.getTime()) / 1000;
    expect(seen.sum / seen.count).toBe(bound);
    const trueStaleness = (storedAt.getTime() - bookedAt.getTime()) / 1000;
    expect(bound).toBeGreaterThanOrEqual(trueStaleness);
    expect(bound).toBe(25 * 60);
    expect(trueStaleness).toBe(10 * 60);
  });

  it('a far date’s change found by a far-band pull just after a near-band one is bounded by its own last pull', async () => {
    // A second account, so the counts above stay the first one's.
    const other = (await h.connectViaWeb(h.sync.sim.users[1]!.email)).connectionId;
    await h.syncNow(other);
    const coveredAt = clock().now(); // every date of the horizon was pulled here
    const bands = h.sync.config.sync.bands.map((band) => band.name);
    const [near, far] = [bands[0]!, bands.at(-1)!];
    const syncBands = (only: string[]) =>
      syncConnection(h.sync.services.syncDeps, {
        connectionId: other,
        jobId: null,
        attempt: 1,
        maxAttempts: 1,
        bands: only,
      });

    clock().advance(3 * 3600);
    // Two weeks ahead: past the seventh open date (bands count open dates) whatever days the account works.
    const slot = await h.sync.db.prisma.slot.findFirstOrThrow({
      where: {
        connectionId: other,
        goneAt: null,
        startsAt: { gt: new Date(clock().now().getTime() + 14 * 86_400_000) },
      },
      orderBy: { startsAt: 'asc' },
    });
    h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
    clock().advance(5 * 60);
    await syncBands([near]);
    clock().advance(10 * 60);
    const before = await observations('7d+');
    await syncBands([far]);

    const storedAt = (await h.sync.db.prisma.slot.findUniqueOrThrow({ where: { id: slot.id } })).goneAt!;
    expect(dateBandOf(slot.startsAt, storedAt)).toBe('7d+');
    const booked = h.sync.sim.control
      .changes()
      .find(
        (c) =>
          c.kind === 'booked' && c.eventId === slot.upstreamEventId && c.startMs === slot.startsAt.getTime(),
      )!;
    const exact = (storedAt.getTime() - booked.atMs) / 1000;
    // The far date was last looked at by the full sync 3 h 15 min before, not by the near pull 10 min before.
    const bound = (storedAt.getTime() - coveredAt.getTime()) / 1000;
    expect(bound).toBe(3 * 3600 + 15 * 60);
    expect(exact).toBeLessThanOrEqual(bound);

    const run = await h.sync.db.prisma.syncRun.findFirstOrThrow({
      where: { connectionId: other, outcome: 'succeeded' },
      orderBy: { startedAt: 'desc' },
    });
    expect(run.bands).toEqual([far]);
    expect(run.stalenessBoundSeconds).toBe(bound);
    const after = await observations('7d+');
    expect(after.count).toBeGreaterThan(before.count);
    expect((after.sum - before.sum) / (after.count - before.count)).toBe(bound);

    const report = await runReport(createReportStore(h.sync.db.prisma), {
      report: 'sync-health',
      connectionId: other,
      at: clock().now(),
      atGiven: true,
      by: 'day',
    });
    expect(report.rows[0]).toMatchObject({ stale_p95_7d: bound });
  });
});
