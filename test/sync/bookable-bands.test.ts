// Bands count the days people can book (issue 38): for an account open Monday to Friday, on a Friday evening
// or a Saturday the default's 4-minute band covers Monday and Tuesday, the first days anyone can book, and a
// booking there reaches the store within 4 minutes. The scheduler and the worker together against the
// simulator, Postgres and Redis, on an injected clock; the default SYNC_BANDS (2d=4m,4d=10m,7d=30m,*=2h).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { tickAndWaitForSyncs } from '../support/scheduler-ticks.js';
import { simUser } from '../support/sync-truth.js';

let h: SyncHarness;
let id: string;
let zone: string;
const clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));
const WORKDAY = [{ start: '09:00', end: '17:00' }];

beforeAll(async () => {
  h = await createSyncHarness('bookable_bands', { clock, simulator: { users: 1, eventTypesPerUser: 2 } });
  const user = simUser(h.sim, h.sim.users[0]!.email);
  zone = user.timezone;
  h.sim.control.setWeeklyHours(user.id, {
    mon: WORKDAY,
    tue: WORKDAY,
    wed: WORKDAY,
    thu: WORKDAY,
    fri: WORKDAY,
    sat: [],
    sun: [],
  });
  h.sim.control.setDisabledDates(user.id, { days: [], months: [] });
  id = await h.connect(user.email);
  await h.startRoles(['worker']);
});
afterAll(async () => {
  await h?.close();
});

/** The account's local wall time `local` (e.g. 2026-03-06T18:00), as the clock's instant. */
const localInstant = (local: string) => DateTime.fromISO(local, { zone }).toUTC().toISO()!;

/** Books the first slot the simulator offers on `date` (local), of the account's first event type. */
function bookFirstOn(date: string): { eventId: string; startsAt: Date } {
  const eventId = simUser(h.sim, h.sim.users[0]!.email).event_types[0]!.event_id;
  const day = DateTime.fromISO(date, { zone });
  const offered = h.sim.control.slotsFor(
    eventId,
    day.toUTC().toISO()!,
    day.plus({ days: 1 }).toUTC().toISO()!,
  );
  if (offered.length === 0) throw new Error(`nothing offered on ${date}`);
  const startsAt = new Date(offered[0]!);
  h.sim.control.book(eventId, startsAt.toISOString());
  return { eventId, startsAt };
}

async function storedClose(slot: { eventId: string; startsAt: Date }) {
  const row = await h.clients.prisma.slot.findFirstOrThrow({
    where: { connectionId: id, upstreamEventId: slot.eventId, startsAt: slot.startsAt },
    orderBy: { id: 'desc' },
  });
  return { gone: row.goneAt !== null, reason: row.closeReason };
}

/** Ticks every minute for `minutes` minutes; the bands each tick's syncs pulled. */
async function tickFor(minutes: number): Promise<string[][]> {
  const pulled: string[][] = [];
  for (let m = 0; m < minutes; m++) {
    clock.advance(60);
    const { enqueued } = await tickAndWaitForSyncs(h);
    if (enqueued === 0) continue;
    const run = await h.clients.prisma.syncRun.findFirstOrThrow({ orderBy: { startedAt: 'desc' } });
    pulled.push(run.bands);
  }
  return pulled;
}

describe('the near band of a Monday-to-Friday account', () => {
  it.each([
    ['on a Friday evening', '2026-03-06T18:00', '2026-03-09', '2026-03-10'],
    ['on a Saturday', '2026-03-07T12:00', '2026-03-09', '2026-03-10'],
    ['on a Sunday night', '2026-03-08T23:00', '2026-03-09', '2026-03-10'],
  ])(
    '%s holds Monday and Tuesday: bookings there are stored within 4 minutes',
    async (_when, local, mon, tue) => {
      clock.set(localInstant(local));
      // Every band is due (a first sync, or a day since the last case): the store then knows which dates are open.
      await tickAndWaitForSyncs(h);
      const monday = bookFirstOn(mon);
      const tuesday = bookFirstOn(tue);
      const pulled = await tickFor(4);
      // Only the 4-minute band came due in those 4 minutes, and it saw both bookings.
      expect(pulled).toEqual([['days 0-1']]);
      expect(await storedClose(monday)).toEqual({ gone: true, reason: 'taken' });
      expect(await storedClose(tuesday)).toEqual({ gone: true, reason: 'taken' });
    },
  );

  it('on a Wednesday morning holds Wednesday and Thursday, as when bands counted calendar days', async () => {
    clock.set(localInstant('2026-03-11T08:00'));
    await tickAndWaitForSyncs(h);
    const thursday = bookFirstOn('2026-03-12');
    const friday = bookFirstOn('2026-03-13');
    const pulled = await tickFor(4);
    expect(pulled).toEqual([['days 0-1']]);
    expect(await storedClose(thursday)).toEqual({ gone: true, reason: 'taken' });
    // Friday is the third bookable day: the 10-minute band's.
    expect(await storedClose(friday)).toEqual({ gone: false, reason: null });
    expect((await tickFor(6)).flat()).toContain('days 2-3');
    expect(await storedClose(friday)).toEqual({ gone: true, reason: 'taken' });
  });
});

// Every band counts bookable days (issue 41, finding 14), not only the near one: the third and fourth days people
// can book are the 10-minute band's and the fifth the 30-minute band's on every day of the week, a weekend
// included, where counted in calendar days Wednesday and Thursday would be 4 and 5 days ahead of a Saturday.
describe('the far bands of a Monday-to-Friday account', () => {
  /** The dates from `today` on (local) that the account's hours open, `today` itself while its hours are on. */
  function bookableFrom(today: DateTime): string[] {
    return Array.from({ length: 14 }, (_, i) => today.plus({ days: i }))
      .filter((day) => day.weekday <= 5)
      .map((day) => day.toISODate()!);
  }

  it.each([
    ['Monday', '2026-03-16'],
    ['Tuesday', '2026-03-17'],
    ['Wednesday', '2026-03-18'],
    ['Thursday', '2026-03-19'],
    ['Friday', '2026-03-20'],
    ['Saturday', '2026-03-21'],
    ['Sunday', '2026-03-22'],
  ])(
    'on a %s at noon hold the third and fourth bookable days in the 10-minute band, the fifth in the 30-minute one',
    async (_weekday, date) => {
      clock.set(localInstant(`${date}T12:00`));
      // A day since the last case: every band is due, and the store knows which dates are open.
      await tickAndWaitForSyncs(h);
      const bookable = bookableFrom(DateTime.fromISO(date, { zone }));
      const [third, fourth, fifth] = [
        bookFirstOn(bookable[2]!),
        bookFirstOn(bookable[3]!),
        bookFirstOn(bookable[4]!),
      ];
      // The near band alone comes due in the first 4 minutes: not theirs.
      expect(await tickFor(4)).toEqual([['days 0-1']]);
      expect([await storedClose(third), await storedClose(fourth)]).toEqual([
        { gone: false, reason: null },
        { gone: false, reason: null },
      ]);
      // The 10-minute band's pull (jitter moves it by up to a tenth) closes both, and the fifth day waits for its own.
      const later = (await tickFor(7)).flat();
      expect(later).toContain('days 2-3');
      expect(later).not.toContain('days 4-6');
      expect([await storedClose(third), await storedClose(fourth), await storedClose(fifth)]).toEqual([
        { gone: true, reason: 'taken' },
        { gone: true, reason: 'taken' },
        { gone: false, reason: null },
      ]);
    },
  );
});
