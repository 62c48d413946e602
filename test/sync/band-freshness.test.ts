// The scheduler and the worker together, on an injected clock: each tick enqueues only the bands that are due,
// a booking on a near date reaches the store at the next near-band pull, a far one waits for its band, and
// the exact staleness of each (the store's time − the simulator's own record of when the booking happened)
// is what the band intervals promise. When the call budget is short, far bands wait and the metrics say so.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import { createRedisCallBudget } from '../../src/sync/call-budget.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { tickAndWaitForSyncs } from '../support/scheduler-ticks.js';

let h: SyncHarness;
let ids: string[];
const clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));

beforeAll(async () => {
  // Bands and bounds of its own, so the times below read plainly.
  h = await createSyncHarness('band_freshness', {
    clock,
    simulator: { users: 3 },
    env: { SYNC_BANDS: '3d=10m,7d=30m,*=2h', SYNC_ADAPT_FACTORS: '0.5,2' },
  });
  ids = [];
  for (const user of h.sim.users) ids.push(await h.connect(user.email));
  await h.startRoles(['worker']);
});
afterAll(async () => {
  await h?.close();
});

/** One scheduler tick at the clock's time; waits until the syncs it enqueued have committed. */
async function tick(deps = h.services.tickDeps) {
  const result = await tickAndWaitForSyncs(h, deps);
  const runs = await h.clients.prisma.syncRun.findMany({
    orderBy: { startedAt: 'desc' },
    take: result.enqueued,
  });
  return { ...result, bands: new Map(runs.map((run) => [run.connectionId, run.bands])) };
}

/** Books the earliest open stored slot of `connectionId` starting `daysAhead` days from now or later. */
async function book(connectionId: string, daysAhead: number) {
  const slot = await h.clients.prisma.slot.findFirstOrThrow({
    where: {
      connectionId,
      goneAt: null,
      startsAt: { gt: new Date(clock.now().getTime() + daysAhead * 86_400_000) },
    },
    orderBy: { startsAt: 'asc' },
  });
  h.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
  return slot;
}

/** Store time − the simulator's record of the booking: how stale the change was when it reached the store. */
async function exactStalenessSeconds(slotId: bigint): Promise<number | null> {
  const slot = await h.clients.prisma.slot.findUniqueOrThrow({ where: { id: slotId } });
  if (slot.goneAt === null) return null;
  const change = h.sim.control
    .changes()
    .find(
      (c) =>
        c.kind === 'booked' && c.eventId === slot.upstreamEventId && c.startMs === slot.startsAt.getTime(),
    );
  if (!change) throw new Error('the simulator has no record of that booking');
  return (slot.goneAt.getTime() - change.atMs) / 1000;
}

describe('ticks on an injected clock', () => {
  it('pull every band of a connection never synced, then only the bands whose time has come', async () => {
    const first = await tick();
    expect(first.enqueued).toBe(3);
    for (const id of ids) expect(first.bands.get(id)).toEqual(['days 0-2', 'days 3-6', 'days 7+']);

    clock.advance(9 * 60);
    expect((await tick()).enqueued).toBe(0);

    const nearSlot = await book(ids[0]!, 1);
    const farSlot = await book(ids[0]!, 12);
    clock.advance(60); // 10 minutes after the first pull: the near band is due, nothing else
    const second = await tick();
    expect(second.enqueued).toBe(3);
    for (const id of ids) expect(second.bands.get(id)).toEqual(['days 0-2']);
    expect(await exactStalenessSeconds(nearSlot.id)).toBe(60);
    expect(await exactStalenessSeconds(farSlot.id)).toBeNull(); // its band has not been pulled since

    // The booked connection's near band saw a change: it is pulled sooner (5 min), the quiet ones later.
    const bandState = (id: string) =>
      h.clients.prisma.connection
        .findUniqueOrThrow({ where: { id } })
        .then((c) => c.bandState as Record<string, { dueAt: string }>);
    const minutesUntil = async (id: string) =>
      (Date.parse((await bandState(id))['days 0-2']!.dueAt) - clock.now().getTime()) / 60_000;
    expect(await minutesUntil(ids[0]!)).toBe(5);
    expect(await minutesUntil(ids[1]!)).toBe(12.5);

    clock.advance(20 * 60); // 30 minutes after the first pull: the week band too
    const third = await tick();
    for (const id of ids) expect(third.bands.get(id)).toEqual(['days 0-2', 'days 3-6']);
    expect(await exactStalenessSeconds(farSlot.id)).toBeNull();

    clock.advance(90 * 60); // 2 hours after the first pull: the far band
    const fourth = await tick();
    for (const id of ids) expect(fourth.bands.get(id)).toContain('days 7+');
    // Booked 9 minutes after the first pull, seen by the far band's pull 111 minutes later.
    expect(await exactStalenessSeconds(farSlot.id)).toBe(111 * 60);
    const farRun = await h.clients.prisma.syncRun.findFirstOrThrow({
      where: { connectionId: ids[0]!, bands: { has: 'days 7+' } },
      orderBy: { startedAt: 'desc' },
    });
    // What slotfeed itself can know: the far dates were last pulled by the first pull, 2 hours before (the
    // connection's previous sync, of the nearer bands, was 90 minutes ago): not less than the exact staleness.
    expect(farRun.changeStaleness).toEqual([{ band: '7d+', boundSeconds: 120 * 60, changes: 3 }]);
    expect(farRun.stalenessBoundSeconds).toBe(120 * 60);
    expect(farRun.changesByBand).toEqual({ '7d+': 3 });
    const slot = await h.clients.prisma.slot.findUniqueOrThrow({ where: { id: farSlot.id } });
    expect(
      DateTime.fromJSDate(slot.startsAt).diff(DateTime.fromJSDate(clock.now()), 'days').days,
    ).toBeGreaterThan(7);
  });

  it('when the budget is short, pull near bands and let far ones wait, and the metrics say how long', async () => {
    clock.advance(3 * 3600); // every band of every connection is due
    const states = (
      await h.clients.prisma.connection.findMany({ where: { id: { in: ids } }, select: { bandState: true } })
    ).map((c) => c.bandState as Record<string, { calls: number }>);
    const costOf = (bands: string[]) =>
      states.reduce((sum, state) => sum + 2 + bands.reduce((s, band) => s + state[band]!.calls, 0), 0);
    const nearOnly = costOf(['days 0-2']);
    const deps = {
      ...h.services.tickDeps,
      // A bank (30 s of budget) that holds the near bands' pulls and no more.
      budget: createRedisCallBudget(h.clients.redis, `${h.config.redis.prefix}:short-budget`, nearOnly / 30),
    };
    const short = await tick(deps);
    // A full bank may be overdrawn by one pull (so a pull dearer than the bank is never starved), no more.
    expect(short.calls).toBeLessThan(costOf(['days 0-2', 'days 3-6', 'days 7+']) / 2);
    for (const id of ids) expect(short.bands.get(id)).toContain('days 0-2');
    for (const bands of short.bands.values()) expect(bands).not.toContain('days 7+');
    expect(short.deferred['days 7+']!.count).toBe(3);
    const overdue = await h.clients.metrics.bandOverdueSeconds.get();
    const farOverdue = overdue.values.find((v) => v.labels.band === 'days 7+')?.value ?? 0;
    expect(farOverdue).toBeGreaterThan(60 * 60);
    const deferred = await h.clients.metrics.bandDeferred.get();
    expect(deferred.values.find((v) => v.labels.band === 'days 7+')?.value).toBe(3);
    expect(deferred.values.find((v) => v.labels.band === 'days 0-2')?.value).toBe(0);
  });
});
