// The demo's seeded world on every day of a year: whatever day a newcomer first runs `npm run demo`, each of the
// three accounts it connects has free time in the first week of its default feed (every enabled, public event
// type), and the three look different (zones, weekly hours, event types). The simulator's clock is injected,
// so the machine's date plays no part.
import { describe, expect, it } from '@jest/globals';
import { DEMO_WORLD } from '../../src/demo/demo-world.js';
import { startSimulator, type SimUserDetails } from '../../src/simulator/index.js';

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
// A year from a fixed reference; the hour of day moves with each day, so every part of a day is tried too.
const FIRST_DAY = Date.parse('2027-01-01T00:00:00Z');
const DAYS = 365;

async function demoWorldAt(nowMs: number): Promise<{ users: SimUserDetails[]; openSlots: number[] }> {
  const sim = await startSimulator({
    port: 0,
    users: DEMO_WORLD.users,
    seed: DEMO_WORLD.seed,
    now: () => new Date(nowMs),
  });
  try {
    const users = sim.control.listUsers().slice(0, DEMO_WORLD.accounts);
    const from = new Date(nowMs).toISOString();
    const to = new Date(nowMs + WEEK_MS).toISOString();
    const openSlots = users.map((user) =>
      user.event_types
        .filter((type) => type.enabled && !type.is_secret)
        .reduce((sum, type) => sum + sim.control.slotsFor(type.event_id, from, to).length, 0),
    );
    return { users, openSlots };
  } finally {
    await sim.close();
  }
}

describe('the demo’s seeded world', () => {
  it('gives each connected account free time in its first week on every day of a year', async () => {
    const empty: string[] = [];
    for (let day = 0; day < DAYS; day++) {
      const nowMs = FIRST_DAY + day * DAY_MS + ((day * 7) % 24) * 3_600_000;
      const { users, openSlots } = await demoWorldAt(nowMs);
      users.forEach((user, i) => {
        if (openSlots[i] === 0) empty.push(`${new Date(nowMs).toISOString()} ${user.profile.name}`);
      });
    }
    expect(empty).toEqual([]);
  });

  it('connects three accounts that differ in zone, weekly hours and event types', async () => {
    const { users } = await demoWorldAt(FIRST_DAY);
    expect(users).toHaveLength(3);
    const distinct = (values: string[]) => new Set(values).size;
    expect(distinct(users.map((u) => u.profile.timezone))).toBe(3);
    expect(distinct(users.map((u) => JSON.stringify(u.weekly_hours)))).toBe(3);
    const publicTypes = (u: SimUserDetails) =>
      JSON.stringify(
        u.event_types
          .filter((t) => t.enabled && !t.is_secret)
          .map((t) => [t.title, t.duration_minutes])
          .sort(),
      );
    expect(distinct(users.map(publicTypes))).toBe(3);
  });
});
