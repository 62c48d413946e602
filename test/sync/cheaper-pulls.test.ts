// The two savings of a scheduled pull (sync/pull-plan.ts), each against the simulator, Postgres and Redis, on an
// injected clock: what it no longer asks, and that the stored snapshot still means what it meant. A near band's
// dates asked for by their slot lists, without the overview, miss no booking, no cancellation and no date that
// reopens; the profile and event types read every SYNC_ACCOUNT_INTERVAL show their changes at that cadence,
// and at once when a stored slot went missing (a booking, or its event type disabled) or a slot list answers
// 404 (its event type removed), so a close is never called a booking that was not one.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import { horizonFrom } from '../../src/sync/horizon-windows.js';
import { syncConnection } from '../../src/sync/sync-connection.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { bandDatesNow, simUser } from '../support/sync-truth.js';

let h: SyncHarness;
const clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));
const NEAR = 'days 0-1';

beforeAll(async () => {
  h = await createSyncHarness('cheaper_pulls', {
    clock,
    simulator: { users: 6, eventTypesPerUser: 3 },
    env: { SYNC_BANDS: '2d=5m,7d=30m,*=2h', SYNC_ACCOUNT_INTERVAL: '15m' },
  });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  h.sim.control.resetCallCounts();
});

const sync = (connectionId: string, bands?: string[]) =>
  syncConnection(h.services.syncDeps, {
    connectionId,
    jobId: null,
    attempt: 1,
    maxAttempts: 1,
    ...(bands ? { bands } : {}),
  });

/** A user of its own per test, connected and synced whole at the clock's time. */
async function connected(index: number) {
  const user = h.sim.users[index]!;
  const details = simUser(h.sim, user.email);
  const id = await h.connect(user.email);
  await sync(id);
  return { id, details, zone: details.timezone };
}

/** The near band's dates now, as the worker cuts them (counted in the dates the store knows open). */
function nearDates(connectionId: string, zone: string): Promise<string[]> {
  const { bands, horizonDays } = h.config.sync;
  return bandDatesNow(h.clients.prisma, connectionId, bands, horizonDays, [NEAR], clock.now(), zone);
}

/** What the simulator offers on `dates` (local to `zone`) of its enabled event types, as "event start" lines. */
function offeredOn(email: string, dates: string[], zone: string): string[] {
  const from = DateTime.fromISO(dates[0]!, { zone }).toUTC().toISO()!;
  const to = DateTime.fromISO(dates.at(-1)!, { zone }).plus({ days: 1 }).toUTC().toISO()!;
  return simUser(h.sim, email)
    .event_types.filter((e) => e.enabled)
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

/** Open stored slots of `connectionId` on `date` (local), optionally of one event type. */
async function openSlotsOn(connectionId: string, date: string, zone: string, eventId?: string) {
  const rows = await h.clients.prisma.slot.findMany({
    where: {
      connectionId,
      goneAt: null,
      startsAt: { gt: clock.now() },
      ...(eventId ? { upstreamEventId: eventId } : {}),
    },
    orderBy: { startsAt: 'asc' },
  });
  return rows.filter((row) => DateTime.fromJSDate(row.startsAt, { zone }).toISODate() === date);
}

const calls = () => h.sim.control.callCounts();

describe('a near band asked for by its slot lists', () => {
  it('asks no overview, and stores every booking and cancellation on its dates as the simulator has them', async () => {
    const { id, details, zone } = await connected(0);
    const [today, tomorrow] = (await nearDates(id, zone)) as [string, string];
    const [first, second] = details.event_types;
    const bookedToday = (await openSlotsOn(id, today, zone, first!.event_id))[0]!;
    const bookedTomorrow = (await openSlotsOn(id, tomorrow, zone, second!.event_id))[0]!;
    // A booking made before the whole sync, so the whole sync stored its slot as taken: freed now, it reopens.
    const freed = (await openSlotsOn(id, tomorrow, zone, first!.event_id)).at(-1)!;
    h.sim.control.book(freed.upstreamEventId, freed.startsAt.toISOString());
    clock.advance(60);
    await sync(id);
    const overviewsBefore = await h.clients.prisma.overview.findMany({
      where: { connectionId: id, band: NEAR },
    });

    clock.advance(5 * 60);
    h.sim.control.book(bookedToday.upstreamEventId, bookedToday.startsAt.toISOString());
    h.sim.control.book(bookedTomorrow.upstreamEventId, bookedTomorrow.startsAt.toISOString());
    h.sim.control.free(freed.upstreamEventId, freed.startsAt.toISOString());
    h.sim.control.resetCallCounts();
    await sync(id, [NEAR]);

    // Every enabled event type has slots on both dates: two slot lists each cost less than an overview and two.
    expect(calls()['GET /calendars/{event_id}']).toBeUndefined();
    expect(calls()['GET /calendars/{event_id}/slots']).toBe(2 * details.event_types.length);
    expect(await openOn(id, [today, tomorrow], zone)).toEqual(
      offeredOn(details.email, [today, tomorrow], zone),
    );
    const closed = await h.clients.prisma.slot.findMany({
      where: { id: { in: [bookedToday.id, bookedTomorrow.id] } },
    });
    expect(closed.map((slot) => slot.closeReason)).toEqual(['taken', 'taken']);
    expect(await openOn(id, [tomorrow], zone)).toContain(
      `${freed.upstreamEventId} ${freed.startsAt.toISOString()}`,
    );
    // The band's overviews stay as the last pull that read them left them.
    expect(await h.clients.prisma.overview.findMany({ where: { connectionId: id, band: NEAR } })).toEqual(
      overviewsBefore,
    );
  });

  it('goes through the overview for an event type whose date the store knows full, and finds it reopen', async () => {
    const { id, details, zone } = await connected(1);
    const [, tomorrow] = (await nearDates(id, zone)) as [string, string];
    const full = details.event_types[0]!;
    // Every slot of one event type tomorrow booked: the store then knows no slot of it that day.
    const tomorrows = await openSlotsOn(id, tomorrow, zone, full.event_id);
    expect(tomorrows.length).toBeGreaterThan(0);
    const offered = () =>
      offeredOn(details.email, [tomorrow], zone).filter((l) => l.startsWith(full.event_id));
    for (let left = offered(); left.length > 0; left = offered()) {
      h.sim.control.book(full.event_id, left[0]!.split(' ')[1]!);
    }
    clock.advance(5 * 60);
    await sync(id, [NEAR]);
    expect(await openSlotsOn(id, tomorrow, zone, full.event_id)).toEqual([]);

    // One freed again: found by the next near pull, whichever way it asks for each event type's dates.
    const booking = h.sim.control
      .changes()
      .findLast((c) => c.kind === 'booked' && c.eventId === full.event_id)!;
    h.sim.control.free(full.event_id, new Date(booking.startMs).toISOString());
    // The near band's dates now (a date left with no open slot of any event type is no longer counted, so the
    // band may reach a date further), and of those, the ones the store knows hold a slot of each event type
    // (the booking blocked every event type's slots over it, so others may have lost a date too).
    const near = await nearDates(id, zone);
    expect(near).toContain(tomorrow);
    const knownDates = await Promise.all(
      details.event_types.map(async (e) => {
        const perDate = await Promise.all(near.map((d) => openSlotsOn(id, d, zone, e.event_id)));
        return perDate.filter((slots) => slots.length > 0).length;
      }),
    );
    expect(knownDates[0]).toBeLessThan(near.length);
    clock.advance(5 * 60);
    h.sim.control.resetCallCounts();
    await sync(id, [NEAR]);
    expect(await openOn(id, near, zone)).toEqual(offeredOn(details.email, near, zone));
    // Directly (a slot list per date) only where every date was known to hold slots; else the overview, then
    // the slot lists of the dates it calls available.
    const offeredDates = (eventId: string) =>
      new Set(
        offeredOn(details.email, near, zone)
          .filter((line) => line.startsWith(`${eventId} `))
          .map((line) => DateTime.fromISO(line.split(' ')[1]!, { zone }).toISODate()),
      ).size;
    const direct = details.event_types.map((_, i) => knownDates[i] === near.length);
    expect(calls()['GET /calendars/{event_id}']).toBe(direct.filter((d) => !d).length);
    expect(calls()['GET /calendars/{event_id}/slots']).toBe(
      details.event_types.reduce(
        (sum, e, i) => sum + (direct[i] ? near.length : offeredDates(e.event_id)),
        0,
      ),
    );
  });
});

describe('the profile and event types on their own cadence', () => {
  it('are not asked again within SYNC_ACCOUNT_INTERVAL, and a change to them is stored by the first pull after it', async () => {
    const { id, details } = await connected(2);
    const readAt = clock.now();
    const eventType = details.event_types[0]!;
    h.sim.control.updateEventType(details.id, eventType.event_id, { title: 'Renamed upstream' });
    const storedTitle = async () =>
      (
        await h.clients.prisma.eventType.findFirstOrThrow({
          where: { connectionId: id, upstreamEventId: eventType.event_id, validTo: null },
        })
      ).title;

    // Nothing went missing, and 14 minutes are within the interval: neither is asked, the old title stays.
    for (const minutes of [5, 10, 14]) {
      clock.set(new Date(readAt.getTime() + minutes * 60_000).toISOString());
      h.sim.control.resetCallCounts();
      await sync(id, [NEAR]);
      expect([calls()['GET /users/me'], calls()['GET /events']]).toEqual([undefined, undefined]);
      expect(await storedTitle()).toBe(eventType.title);
    }
    clock.set(new Date(readAt.getTime() + 15 * 60_000).toISOString());
    h.sim.control.resetCallCounts();
    await sync(id, [NEAR]);
    expect([calls()['GET /users/me'], calls()['GET /events']]).toEqual([1, 1]);
    expect(await storedTitle()).toBe('Renamed upstream');
    const coverage = (await h.clients.prisma.connection.findUniqueOrThrow({ where: { id } }))
      .pullCoverage as {
      eventTypesPulledAt: string;
    };
    expect(coverage.eventTypesPulledAt).toBe(clock.now().toISOString());
  });

  it('are read at once when an event type was disabled: its slots close as disabled, never as taken', async () => {
    const { id, details, zone } = await connected(3);
    const disabled = details.event_types[1]!;
    h.sim.control.updateEventType(details.id, disabled.event_id, { enabled: false });
    clock.advance(5 * 60);
    const bookingsBefore = await h.clients.prisma.booking.count({ where: { connectionId: id } });
    h.sim.control.resetCallCounts();
    await sync(id, [NEAR]);

    expect([calls()['GET /users/me'], calls()['GET /events']]).toEqual([1, 1]);
    const closed = await h.clients.prisma.slot.findMany({
      where: { connectionId: id, upstreamEventId: disabled.event_id, goneAt: clock.now() },
      select: { closeReason: true },
    });
    expect(closed.length).toBeGreaterThan(0);
    expect(new Set(closed.map((slot) => slot.closeReason))).toEqual(new Set(['event_type_disabled']));
    expect(await h.clients.prisma.booking.count({ where: { connectionId: id } })).toBe(bookingsBefore);
    const horizon = horizonFrom(clock.now(), zone, h.config.sync.horizonDays).dates;
    expect(await openOn(id, horizon, zone)).toEqual(offeredOn(details.email, horizon, zone));
  });

  it('are read at once when a slot list answers 404: a removed event type’s slots close as removed', async () => {
    const { id, details, zone } = await connected(4);
    const removed = details.event_types[2]!;
    h.sim.control.deleteEventType(details.id, removed.event_id);
    clock.advance(5 * 60);
    const bookingsBefore = await h.clients.prisma.booking.count({ where: { connectionId: id } });
    const changes = await sync(id, [NEAR]);

    expect(changes.superseded).toBe(false);
    const closed = await h.clients.prisma.slot.findMany({
      where: { connectionId: id, upstreamEventId: removed.event_id, goneAt: clock.now() },
      select: { closeReason: true },
    });
    expect(closed.length).toBeGreaterThan(0);
    expect(new Set(closed.map((slot) => slot.closeReason))).toEqual(new Set(['event_type_removed']));
    expect(await h.clients.prisma.booking.count({ where: { connectionId: id } })).toBe(bookingsBefore);
    const horizon = horizonFrom(clock.now(), zone, h.config.sync.horizonDays).dates;
    expect(await openOn(id, horizon, zone)).toEqual(offeredOn(details.email, horizon, zone));
  });

  it('are read at once when a stored slot went missing by a booking, and the close is a booking', async () => {
    const { id, zone } = await connected(5);
    const dates = await nearDates(id, zone);
    const slot = (await Promise.all(dates.map((date) => openSlotsOn(id, date, zone)))).flat()[0]!;
    h.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
    clock.advance(5 * 60);
    h.sim.control.resetCallCounts();
    await sync(id, [NEAR]);
    expect([calls()['GET /users/me'], calls()['GET /events']]).toEqual([1, 1]);
    const stored = await h.clients.prisma.slot.findUniqueOrThrow({ where: { id: slot.id } });
    expect(stored.closeReason).toBe('taken');
    expect(
      await h.clients.prisma.booking.count({ where: { connectionId: id, detectedAt: clock.now() } }),
    ).toBe(1);
  });
});
