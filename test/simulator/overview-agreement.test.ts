// The overview and the slots endpoint must tell the same story: a guest date is available iff it has a slot.
// Uses the generated schedules untouched (buffers, seeded bookings, disabled days, midnight-crossing shifts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunningSimulator } from '../../src/simulator/index.js';
import type { OverviewBody, SlotListBody, TokenSet } from './sim-client.js';
import { apiJson, connectUser, startFixedSimulator } from './sim-client.js';

let sim: RunningSimulator;
const tokens: TokenSet[] = [];

beforeAll(async () => {
  sim = await startFixedSimulator({ users: 5, seed: 7 });
  for (let i = 0; i < 5; i++) tokens.push(await connectUser(sim, i));
});
afterAll(() => sim.close());

function datesFrom(start: string, count: number): string[] {
  const dates: string[] = [];
  for (let i = 0; i < count; i++) {
    dates.push(new Date(Date.parse(`${start}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10));
  }
  return dates;
}

const GUEST_ZONES = ['UTC', 'Pacific/Chatham', 'America/Los_Angeles'];

describe('overview ↔ slots agreement over 2026-03-05 + 1m (crosses the US, EU and Lord Howe DST changes)', () => {
  it.each([0, 1, 2, 3, 4])(
    'user %i, every enabled event type, guest zones east and west',
    async (userIndex) => {
      const token = tokens[userIndex]?.access_token ?? '';
      const user = sim.control.listUsers()[userIndex];
      // Three event types per user keep the file fast while still mixing durations and buffers.
      const enabled = (user?.event_types.filter((e) => e.enabled) ?? []).slice(0, 3);
      expect(enabled.length).toBeGreaterThan(0);
      let availableSeen = 0;
      for (const event of enabled) {
        for (const zone of GUEST_ZONES) {
          const overview = await apiJson<OverviewBody>(
            sim,
            `/calendars/${event.event_id}?start_date=2026-03-05&timezone=${encodeURIComponent(zone)}&period=1m`,
            token,
          );
          expect(overview.timezone).toBe(zone);
          const withSlots: string[] = [];
          const allSlots: string[] = [];
          for (const date of datesFrom('2026-03-05', 31)) {
            const body = await apiJson<SlotListBody>(
              sim,
              `/calendars/${event.event_id}/slots?date=${date}&timezone=${encodeURIComponent(zone)}`,
              token,
            );
            const keys = Object.keys(body.slot_list);
            for (const key of keys) expect(key).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
            if (keys.length > 0) withSlots.push(date);
            allSlots.push(...keys);
          }
          expect(overview.availability.available_dates).toEqual(withSlots);
          availableSeen += withSlots.length;
          if (withSlots.length > 0) expect(overview.availability.first_available_date).toBe(withSlots[0]);
          // The same instants as the ground truth over the whole guest-zone window.
          const first = allSlots[0];
          const last = allSlots[allSlots.length - 1];
          if (first && last) {
            const truth = sim.control.slotsFor(
              event.event_id,
              first,
              new Date(Date.parse(last) + 1).toISOString(),
            );
            expect(truth).toEqual(allSlots);
          }
        }
      }
      expect(availableSeen).toBeGreaterThan(0);
    },
  );

  it('week_days reflects the owner’s weekly hours and last_available_date is the last slot in the horizon', async () => {
    const user = sim.control.listUsers()[0];
    const event = user?.event_types.find((e) => e.enabled);
    if (!user || !event) throw new Error('fixture');
    const overview = await apiJson<OverviewBody>(
      sim,
      `/calendars/${event.event_id}?start_date=2026-03-02&timezone=UTC`,
      tokens[0]?.access_token ?? '',
    );
    for (const [day, ranges] of Object.entries(user.weekly_hours)) {
      expect(overview.availability.weekly.week_days[day]).toBe(ranges.length > 0);
    }
    const horizonSlots = sim.control.slotsFor(event.event_id, '2026-03-02T00:00:00Z', '2027-03-02T00:00:00Z');
    expect(overview.availability.last_available_date).toBe(
      horizonSlots[horizonSlots.length - 1]?.slice(0, 10),
    );
  });
});
