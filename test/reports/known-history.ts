// A known slot history for the report tests: a simulated account in Europe/Berlin with one enabled event type
// (60 minutes, no buffers, bookable 3 days ahead) and three slots a day (00:00, 10:00, 11:00 local, so the
// midnight slot changes UTC date and moves across the 2026-03-29 DST switch). Four syncs with bookings
// between them, on a FakeClock:
//
//   T0 2026-03-27T12:00Z  sync 1: 9 slots (Mar 28, 29, 30 × 00:00/10:00/11:00 local)
//      book Mar 28 10:00 (09:00Z)
//   T1 2026-03-27T18:00Z  sync 2: 1 booked (lead 15 h)
//      book Mar 29 00:00 (Mar 28 23:00Z), Mar 29 11:00 (09:00Z, CEST), Mar 30 00:00 (Mar 29 22:00Z)
//   T2 2026-03-28T12:00Z  sync 3: 3 booked (leads 11 h, 21 h, 34 h), Mar 28 00:00 and 11:00 expired,
//                          Mar 31 opened (3)
//   T3 2026-03-30T06:00Z  sync 4: Mar 29 10:00 and Mar 30 00:00-… expired, Apr 1 and Apr 2 opened (6)
//
// A second account (America/New_York) connects, syncs once at T0, has its grant revoked, and fails its next
// sync at T3 with invalid_grant: it needs re-authorisation.
import { syncConnection } from '../../src/sync/sync-connection.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';

export const T0 = '2026-03-27T12:00:00.000Z';
export const T1 = '2026-03-27T18:00:00.000Z';
export const T2 = '2026-03-28T12:00:00.000Z';
export const T3 = '2026-03-30T06:00:00.000Z';

export interface KnownHistory {
  h: SyncHarness;
  clock: FakeClock;
  berlin: { connectionId: string; eventId: string; email: string };
  newYork: { connectionId: string; email: string };
}

const sync = (h: SyncHarness, connectionId: string) =>
  syncConnection(h.services.syncDeps, { connectionId, jobId: null, attempt: 1, maxAttempts: 1 });

/**
 * Harness options the script expects: its clock, two simulated users, 3-hour access tokens, and the bands its
 * call counts were written for (the defaults before issue 30: a 7-day horizon in two bands).
 */
export function knownHistoryOptions(clock: FakeClock) {
  return {
    clock,
    simulator: { users: 2, seed: 11, accessTokenTtlSeconds: 3 * 3600 },
    env: { SYNC_HORIZON_DAYS: '7', SYNC_BANDS: '4d=10m,7d=40m,*=3h' },
  };
}

export async function buildKnownHistory(label: string): Promise<KnownHistory> {
  const clock = new FakeClock(new Date(T0));
  return scriptKnownHistory(await createSyncHarness(label, knownHistoryOptions(clock)), clock);
}

/** Runs the script on a harness created with knownHistoryOptions(clock), the clock standing at T0. */
export async function scriptKnownHistory(h: SyncHarness, clock: FakeClock): Promise<KnownHistory> {
  const [berlinUser, newYorkUser] = h.sim.control.listUsers();
  if (berlinUser?.timezone !== 'Europe/Berlin' || newYorkUser?.timezone !== 'America/New_York') {
    throw new Error('the simulator no longer puts user 0 in Berlin and user 1 in New York');
  }
  const [event, ...others] = berlinUser.event_types;
  if (!event) throw new Error('simulated user without event types');
  for (const other of others)
    h.sim.control.updateEventType(berlinUser.id, other.event_id, { enabled: false });
  h.sim.control.updateEventType(berlinUser.id, event.event_id, {
    enabled: true,
    duration_minutes: 60,
    buffer_before_minutes: 0,
    buffer_after_minutes: 0,
    max_days_ahead: 3,
  });
  const day = [
    { start: '00:00', end: '01:00' },
    { start: '10:00', end: '12:00' },
  ];
  h.sim.control.setWeeklyHours(berlinUser.id, {
    mon: day,
    tue: day,
    wed: day,
    thu: day,
    fri: day,
    sat: day,
    sun: day,
  });
  h.sim.control.setDisabledDates(berlinUser.id, { days: [], months: [] });
  // Simulated bookings from the seed would make the history harder to read; the script books its own.
  for (const booking of berlinUser.bookings) h.sim.control.free(booking.event_id, booking.start);

  const berlinId = await h.connect(berlinUser.email);
  const newYorkId = await h.connect(newYorkUser.email);

  await sync(h, berlinId);
  await sync(h, newYorkId);
  h.sim.control.book(event.event_id, '2026-03-28T09:00:00Z');

  clock.set(T1);
  await sync(h, berlinId);
  h.sim.control.book(event.event_id, '2026-03-28T23:00:00Z');
  h.sim.control.book(event.event_id, '2026-03-29T09:00:00Z');
  h.sim.control.book(event.event_id, '2026-03-29T22:00:00Z');

  clock.set(T2);
  await sync(h, berlinId);

  clock.set(T3);
  h.sim.control.revokeGrants(newYorkUser.id);
  await sync(h, berlinId);
  await sync(h, newYorkId).catch(() => undefined);

  return {
    h,
    clock,
    berlin: { connectionId: berlinId, eventId: event.event_id, email: berlinUser.email },
    newYork: { connectionId: newYorkId, email: newYorkUser.email },
  };
}
