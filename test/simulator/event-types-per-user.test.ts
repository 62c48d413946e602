// The benchmark option: every simulated user with exactly N enabled event types, still served by the API.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { startSimulator } from '../../src/simulator/index.js';
import { apiJson, connectUser, startFixedSimulator } from './sim-client.js';

let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startFixedSimulator({ users: 6, eventTypesPerUser: 3 });
});
afterAll(() => sim.close());

describe('eventTypesPerUser', () => {
  it('gives every user, user 0 included, exactly that many enabled, public event types', () => {
    const users = sim.control.listUsers();
    expect(users).toHaveLength(6);
    for (const user of users) {
      expect(user.event_types).toHaveLength(3);
      expect(user.event_types.every((e) => e.enabled && !e.is_secret)).toBe(true);
      expect(new Set(user.event_types.map((e) => e.event_id)).size).toBe(3);
    }
  });

  it('serves them from GET /events', async () => {
    const { access_token: accessToken } = await connectUser(sim, 2);
    const events = await apiJson<{ event_id: string }[]>(sim, '/events', accessToken);
    expect(events.map((e) => e.event_id)).toEqual(
      sim.control.listUsers()[2]?.event_types.map((e) => e.event_id),
    );
  });

  it('is deterministic for a seed, and refuses a count outside 1–50', async () => {
    const again = await startFixedSimulator({ users: 6, eventTypesPerUser: 3 });
    try {
      expect(again.control.listUsers().map((u) => u.event_types)).toEqual(
        sim.control.listUsers().map((u) => u.event_types),
      );
    } finally {
      await again.close();
    }
    await expect(startSimulator({ users: 1, eventTypesPerUser: 0 })).rejects.toThrow(RangeError);
  });
});
