// A sync of some bands pulls only their dates (slot lists, through the overview or directly) and commits a partial
// snapshot: on the dates it pulled the store equals the simulator, on the horizon's other dates nothing moves,
// however the account's midnight and a DST change fall between syncs, and whatever the account's zone does
// to the UTC date of a slot.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import { horizonFrom } from '../../src/sync/horizon-windows.js';
import { syncConnection } from '../../src/sync/sync-connection.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { bandDatesNow, simUser } from '../support/sync-truth.js';
import { WEEKDAYS } from '../../src/simulator/types.js';

let h: SyncHarness;
const clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));

beforeAll(async () => {
  h = await createSyncHarness('partial_sync', {
    clock,
    simulator: { users: 2 },
    env: { SYNC_BANDS: '3d=10m,7d=30m,*=2h' },
  });
});
afterAll(async () => {
  await h?.close();
});

interface StoredRow {
  id: bigint;
  date: string;
  goneAt: Date | null;
  closeReason: string | null;
  lastChangedAt: Date;
  sequence: number;
}

async function storedRows(connectionId: string, zone: string): Promise<Map<bigint, StoredRow>> {
  const rows = await h.clients.prisma.slot.findMany({ where: { connectionId } });
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        date: DateTime.fromJSDate(row.startsAt, { zone }).toISODate()!,
        goneAt: row.goneAt,
        closeReason: row.closeReason,
        lastChangedAt: row.lastChangedAt,
        sequence: row.sequence,
      },
    ]),
  );
}

const sync = (connectionId: string, bands?: string[]) =>
  syncConnection(h.services.syncDeps, {
    connectionId,
    jobId: null,
    attempt: 1,
    maxAttempts: 1,
    ...(bands ? { bands } : {}),
  });

/** The dates of `bandNames` at `now` in `zone`, as the worker cuts them from SYNC_BANDS and the stored open dates. */
function datesOf(connectionId: string, bandNames: string[], now: Date, zone: string): Promise<string[]> {
  const { bands, horizonDays } = h.config.sync;
  return bandDatesNow(h.clients.prisma, connectionId, bands, horizonDays, bandNames, now, zone);
}

/** What the simulator offers on `dates` (local to `zone`), as "event start" lines. */
function offeredOn(email: string, dates: string[], zone: string): string[] {
  const user = simUser(h.sim, email);
  const from = DateTime.fromISO(dates[0]!, { zone }).toUTC().toISO()!;
  const to = DateTime.fromISO(dates.at(-1)!, { zone }).plus({ days: 1 }).toUTC().toISO()!;
  return user.event_types
    .filter((e) => e.enabled)
    .flatMap((e) =>
      h.sim.control.slotsFor(e.event_id, from, to).map((s) => `${e.event_id} ${new Date(s).toISOString()}`),
    )
    .sort();
}

async function openOn(connectionId: string, dates: string[], zone: string): Promise<string[]> {
  const wanted = new Set(dates);
  const rows = await h.clients.prisma.slot.findMany({ where: { connectionId, goneAt: null } });
  return rows
    .filter((row) => wanted.has(DateTime.fromJSDate(row.startsAt, { zone }).toISODate()!))
    .map((row) => `${row.upstreamEventId} ${row.startsAt.toISOString()}`)
    .sort();
}

/** Books the earliest open stored slot on the first of `dates` (local) that has one, and returns it. */
async function bookOn(connectionId: string, dates: string[], zone: string) {
  const rows = await h.clients.prisma.slot.findMany({
    where: { connectionId, goneAt: null, startsAt: { gt: clock.now() } },
    orderBy: { startsAt: 'asc' },
  });
  const slot = dates
    .map((date) => rows.find((row) => DateTime.fromJSDate(row.startsAt, { zone }).toISODate() === date))
    .find((found) => found !== undefined);
  if (!slot) throw new Error(`no open slot on ${dates.join(', ')}`);
  h.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
  return slot;
}

/** Every row on a horizon date outside `pulled` is as it was; rows on pulled dates may have moved. */
function expectUntouchedOutside(
  before: Map<bigint, StoredRow>,
  after: Map<bigint, StoredRow>,
  pulled: string[],
  horizon: string[],
) {
  const pulledSet = new Set(pulled);
  const notPulled = new Set(horizon.filter((d) => !pulledSet.has(d)));
  const outside = [...before.values()].filter((row) => notPulled.has(row.date));
  expect(outside.length).toBeGreaterThan(0);
  for (const row of outside) expect(after.get(row.id)).toEqual(row);
  // Nothing new appeared on dates not pulled either.
  const added = [...after.values()].filter((row) => !before.has(row.id) && notPulled.has(row.date));
  expect(added).toEqual([]);
}

describe('a partial sync', () => {
  it('pulls only its bands’ dates and closes slots only there', async () => {
    const user = h.sim.users[0]!;
    const zone = simUser(h.sim, user.email).timezone;
    const id = await h.connect(user.email);
    await sync(id);
    const now = clock.now();
    const horizon = horizonFrom(now, zone, h.config.sync.horizonDays).dates;
    const near = await datesOf(id, ['days 0-2'], now, zone);
    const nearSlot = await bookOn(id, near.slice(1), zone);
    const weekSlot = await bookOn(id, await datesOf(id, ['days 3-6'], now, zone), zone);
    const farSlot = await bookOn(id, (await datesOf(id, ['days 7+'], now, zone)).slice(3), zone);

    clock.advance(600);
    h.sim.control.resetCallCounts();
    const before = await storedRows(id, zone);
    const changes = await sync(id, ['days 0-2']);
    const after = await storedRows(id, zone);

    expect(after.get(nearSlot.id)?.closeReason).toBe('taken');
    expect(after.get(weekSlot.id)?.goneAt).toBeNull();
    expect(after.get(farSlot.id)?.goneAt).toBeNull();
    expectUntouchedOutside(before, after, near, horizon);
    expect(await openOn(id, near, zone)).toEqual(offeredOn(user.email, near, zone));
    expect(changes.changedByPulledBand).toEqual({ 'days 0-2': expect.any(Number) });

    // The calls: a slot list per near date and enabled event type, and no overview: the store knew every near
    // date of each of them holds slots, so asking each date costs less than the overview and those lists. And
    // the profile and event types, read at once though their interval has not passed: a stored slot went
    // missing (the booking), and only the list of event types says whether that was a booking.
    const enabled = simUser(h.sim, user.email).event_types.filter((e) => e.enabled);
    const availableNear = enabled.reduce((sum, e) => {
      const offered = offeredOn(user.email, near, zone).filter((line) => line.startsWith(`${e.event_id} `));
      return (
        sum + new Set(offered.map((line) => DateTime.fromISO(line.split(' ')[1]!, { zone }).toISODate())).size
      );
    }, 0);
    expect(availableNear).toBe(near.length * enabled.length);
    const calls = h.sim.control.callCounts();
    expect(calls['GET /calendars/{event_id}']).toBeUndefined();
    expect(calls['GET /calendars/{event_id}/slots']).toBe(near.length * enabled.length);
    expect([calls['GET /users/me'], calls['GET /events']]).toEqual([1, 1]);
    const run = await h.clients.prisma.syncRun.findFirstOrThrow({
      where: { connectionId: id },
      orderBy: { startedAt: 'desc' },
    });
    expect(run.bands).toEqual(['days 0-2']);

    // The other bands' pull closes the rest.
    clock.advance(60);
    await sync(id, ['days 3-6', 'days 7+']);
    const last = await storedRows(id, zone);
    expect(last.get(weekSlot.id)?.closeReason).toBe('taken');
    expect(last.get(farSlot.id)?.closeReason).toBe('taken');
    expect(await openOn(id, horizon.slice(1), zone)).toEqual(offeredOn(user.email, horizon.slice(1), zone));
  });

  it.each([
    // Berlin: the account's midnight, then spring forward (2026-03-29 02:00 local) on the newly near dates.
    { user: 0, zoneIs: 'Europe/Berlin', lateEvening: '2026-03-28T23:50:00' },
    // New York: midnight local is 05:00 UTC, so a slot's UTC date is often not its local one; DST on 03-08.
    { user: 1, zoneIs: 'America/New_York', lateEvening: '2026-03-07T23:50:00' },
  ])(
    'across the account’s midnight and a DST change ($zoneIs), touches only the dates it pulled',
    async ({ user: index, zoneIs, lateEvening }) => {
      const user = h.sim.users[index]!;
      const details = simUser(h.sim, user.email);
      const zone = details.timezone;
      expect(zone).toBe(zoneIs);
      // Open every day (each closed day given the account's own working hours), so the near band holds the DST
      // change's date with slots on it. Closed days are bookable-bands.test.ts's.
      const worked = WEEKDAYS.map((day) => details.weekly_hours[day]).find((ranges) => ranges.length > 0)!;
      h.sim.control.setWeeklyHours(
        details.id,
        Object.fromEntries(
          WEEKDAYS.map((day) => [
            day,
            details.weekly_hours[day].length > 0 ? details.weekly_hours[day] : worked,
          ]),
        ),
      );
      clock.set(DateTime.fromISO(lateEvening, { zone }).toUTC().toISO()!);
      const id = await h.connect(user.email);
      await sync(id);
      const firstNear = await datesOf(id, ['days 0-2'], clock.now(), zone);

      clock.advance(20 * 60); // past the account's midnight
      const now = clock.now();
      const near = await datesOf(id, ['days 0-2'], now, zone);
      // Bands count open dates: at 23:50 the day's last slot had passed, so the near band counted its three open
      // dates from tomorrow already (today stayed in it by calendar distance); midnight only drops yesterday.
      expect(near).toEqual(firstNear.slice(1));
      const newlyNear = near.at(-1)!; // the third open date, across the DST change
      const newlyNearSlot = await bookOn(id, [newlyNear], zone);
      const weekSlot = await bookOn(id, await datesOf(id, ['days 3-6'], now, zone), zone);

      const before = await storedRows(id, zone);
      await sync(id, ['days 0-2']);
      const after = await storedRows(id, zone);
      const horizon = horizonFrom(now, zone, h.config.sync.horizonDays).dates;
      expect(after.get(newlyNearSlot.id)?.closeReason).toBe('taken');
      expect(after.get(weekSlot.id)?.goneAt).toBeNull();
      expectUntouchedOutside(before, after, near, horizon);
      expect(await openOn(id, near, zone)).toEqual(offeredOn(user.email, near, zone));
      // Yesterday's slots all started: closed as passed, never as taken.
      const yesterday = firstNear[0]!;
      const yesterdays = [...after.values()].filter(
        (row) => row.date === yesterday && before.get(row.id)?.goneAt === null,
      );
      for (const row of yesterdays) expect(row.closeReason).toBe('passed');
    },
  );

  it('after an event type is re-enabled, pulls every band once the account is read: its slots are open on far dates at once', async () => {
    const user = h.sim.users[0]!;
    const details = simUser(h.sim, user.email);
    const zone = details.timezone;
    const id = await h.connect(user.email);
    await sync(id);
    const event = details.event_types.find((e) => e.enabled)!;
    const openOf = async (dates: string[]) =>
      (await openOn(id, dates, zone)).filter((line) => line.startsWith(`${event.event_id} `));

    // Disabling closes its slots on every date, whatever bands the sync pulls: its near slots went missing,
    // so the pull read the event types at once.
    h.sim.control.updateEventType(details.id, event.event_id, { enabled: false });
    clock.advance(600);
    await sync(id, ['days 0-2']);
    const horizon = horizonFrom(clock.now(), zone, h.config.sync.horizonDays).dates.slice(1);
    expect(await openOf(horizon)).toEqual([]);
    const disabledAt = clock.now();

    // Enabled again: nothing of it is missing, so it is seen when the event types are next read, at
    // SYNC_ACCOUNT_INTERVAL; until then nothing of it opens.
    h.sim.control.updateEventType(details.id, event.event_id, { enabled: true });
    clock.advance(600);
    await sync(id, ['days 0-2']);
    expect(await openOf(horizon)).toEqual([]);
    clock.set(new Date(disabledAt.getTime() + h.config.sync.accountIntervalSeconds * 1000).toISOString());
    const reenabledAt = clock.now();
    await sync(id, ['days 0-2']);
    const far = await datesOf(id, ['days 7+'], clock.now(), zone);
    const offeredFar = offeredOn(user.email, far, zone).filter((line) =>
      line.startsWith(`${event.event_id} `),
    );
    expect(offeredFar.length).toBeGreaterThan(0);
    expect(await openOf(far)).toEqual(offeredFar);
    // (The clock stands before the earlier tests' runs: the one run of this instant is this sync's.)
    const run = await h.clients.prisma.syncRun.findFirstOrThrow({
      where: { connectionId: id, startedAt: reenabledAt },
    });
    expect(run.bands).toEqual(['days 0-2', 'days 3-6', 'days 7+']);
  });
});
