// The generated world (deterministic, varied zones, valid event types), call counting, /__sim/users, the banner.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunningSimulator, SimUserDetails } from '../../src/simulator/index.js';
import { formatSimulatorBanner } from '../../src/simulator/index.js';
import { apiGet, connectUser, loginUrl, simHttp, startFixedSimulator, tokenRequest } from './sim-client.js';

let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startFixedSimulator({ users: 8 });
});
afterAll(() => sim.close());

describe('generated world', () => {
  it('has the documented defaults', () => {
    expect(sim.clientId).toBe('slotfeed-local');
    expect(sim.clientSecret).toBe('slotfeed-local-secret');
    expect(sim.redirectUris).toEqual(['http://127.0.0.1:3000/oauth/callback']);
    expect(sim.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.baseUrl).toBe(`${sim.origin}/api`);
    expect(sim.authUrl).toBe(`${sim.origin}/auth`);
  });

  it('gives the first five users the awkward zones, and unique ids and emails to all', () => {
    expect(sim.users).toHaveLength(8);
    expect(sim.users.slice(0, 5).map((u) => u.timezone)).toEqual([
      'Europe/Berlin',
      'America/New_York',
      'Asia/Kolkata',
      'America/St_Johns',
      'Australia/Lord_Howe',
    ]);
    expect(new Set(sim.users.map((u) => u.id)).size).toBe(8);
    expect(new Set(sim.users.map((u) => u.email)).size).toBe(8);
    for (const user of sim.users) {
      expect(user.id).toMatch(/^usr_[a-z0-9]+$/);
      expect(user.email).toMatch(/^[a-z]+\.[a-z0-9]+@example\.test$/);
    }
  });

  it('event types follow the documented ranges; user 0 has a disabled and a secret one', () => {
    const users = sim.control.listUsers();
    const eventIds = new Set<string>();
    for (const user of users) {
      expect(user.event_types.length).toBeGreaterThanOrEqual(1);
      expect(user.event_types.length).toBeLessThanOrEqual(6);
      for (const event of user.event_types) {
        eventIds.add(event.event_id);
        expect(event.duration_minutes).toBeGreaterThanOrEqual(15);
        expect(event.duration_minutes).toBeLessThanOrEqual(120);
        expect(event.duration_minutes % 5).toBe(0);
        expect([0, 5, 10, 15]).toContain(event.buffer_before_minutes);
        expect([0, 5, 10, 15]).toContain(event.buffer_after_minutes);
        expect(user.max_days_ahead[event.event_id]).toBeGreaterThan(0);
      }
    }
    expect(eventIds.size).toBe(users.reduce((n, u) => n + u.event_types.length, 0));
    const first = users[0]?.event_types ?? [];
    expect(first.length).toBeGreaterThanOrEqual(3);
    expect(first.some((e) => !e.enabled)).toBe(true);
    expect(first.some((e) => e.is_secret)).toBe(true);
  });

  it('someone works Saturdays and the New York late shift crosses midnight UTC', () => {
    const users = sim.control.listUsers();
    expect(users.some((u) => u.weekly_hours.sat.length > 0)).toBe(true);
    const ny = users[1];
    const shift = ny?.weekly_hours.tue[0];
    expect(shift).toBeDefined();
    // 23:00 in New York is 03:00 or 04:00 UTC the next day.
    expect(Number(shift?.end.slice(0, 2)) + 4).toBeGreaterThan(24);
  });

  it('seeds existing bookings that take slots away', () => {
    const users = sim.control.listUsers();
    const bookings = users.flatMap((u) => u.bookings);
    expect(bookings.length).toBeGreaterThan(0);
    for (const booking of bookings) {
      const truth = sim.control.slotsFor(booking.event_id, booking.start, booking.end);
      expect(truth).not.toContain(booking.start);
    }
  });

  it('is deterministic: same seed, same users, schedules and slots; another seed differs', async () => {
    const twin = await startFixedSimulator({ users: 8 });
    const other = await startFixedSimulator({ users: 8, seed: 2 });
    try {
      expect(twin.control.listUsers()).toEqual(sim.control.listUsers());
      const eventId = sim.control.listUsers()[2]?.event_types[0]?.event_id ?? '';
      const range = ['2026-03-02T00:00:00Z', '2026-04-02T00:00:00Z'] as const;
      const slots = sim.control.slotsFor(eventId, ...range);
      expect(slots.length).toBeGreaterThan(0);
      expect(twin.control.slotsFor(eventId, ...range)).toEqual(slots);
      expect(other.users.map((u) => u.id)).not.toEqual(sim.users.map((u) => u.id));
    } finally {
      await twin.close();
      await other.close();
    }
  });

  it('GET /__sim/users returns the same details as listUsers()', async () => {
    const response = await simHttp(sim, 'GET', '/users');
    expect(response.status).toBe(200);
    const users = response.json as SimUserDetails[];
    expect(users).toEqual(sim.control.listUsers());
    expect(Object.keys(users[0] ?? {}).sort()).toEqual(
      [
        'bookings',
        'disabled_days',
        'disabled_months',
        'email',
        'event_types',
        'id',
        'max_days_ahead',
        'name',
        'profile',
        'timezone',
        'weekly_hours',
      ].sort(),
    );
  });
});

describe('call counts', () => {
  it('counts every request per endpoint key, faulted ones included, and per user', async () => {
    sim.control.resetCallCounts();
    await fetch(loginUrl(sim, {}));
    const a = await connectUser(sim, 0); // GET /login + POST /oauth2/token
    const b = await connectUser(sim, 1);
    sim.control.setFaults({ queue: [{ endpoint: 'GET /events', kind: 'status', status: 500 }] });
    expect((await apiGet(sim, '/events', a.access_token)).status).toBe(500);
    await apiGet(sim, '/events', a.access_token);
    await apiGet(sim, '/users/me', b.access_token);
    const eventId = sim.control.listUsers()[0]?.event_types[0]?.event_id ?? '';
    await apiGet(sim, `/calendars/${eventId}?start_date=2026-03-02&timezone=UTC`, a.access_token);
    await apiGet(sim, `/calendars/${eventId}/slots?date=2026-03-03&timezone=UTC`, a.access_token);
    await apiGet(sim, `/calendars/${eventId}/slots?date=2026-03-04&timezone=UTC`, a.access_token);
    await apiGet(sim, '/events', null); // unauthenticated: counted, no user
    await tokenRequest(sim, { grant_type: 'refresh_token', refresh_token: b.refresh_token });

    const expected = {
      'GET /login': 3,
      'POST /oauth2/token': 3,
      'GET /events': 3,
      'GET /users/me': 1,
      'GET /calendars/{event_id}': 1,
      'GET /calendars/{event_id}/slots': 2,
    };
    expect(sim.control.callCounts()).toEqual(expected);
    expect((await simHttp(sim, 'GET', '/calls')).json).toEqual(expected);
    expect(sim.control.callCountsByUser()).toEqual({
      [sim.users[0]?.id ?? '']: {
        'POST /oauth2/token': 1,
        'GET /events': 2,
        'GET /calendars/{event_id}': 1,
        'GET /calendars/{event_id}/slots': 2,
      },
      [sim.users[1]?.id ?? '']: { 'POST /oauth2/token': 2, 'GET /users/me': 1 },
    });

    expect((await simHttp(sim, 'DELETE', '/calls')).status).toBe(204);
    expect(sim.control.callCounts()).toEqual({});
    expect(sim.control.callCountsByUser()).toEqual({});
  });
});

describe('banner', () => {
  it('names the URLs, the client, the redirect URIs and every user', () => {
    const banner = formatSimulatorBanner(sim);
    for (const text of [sim.baseUrl, sim.authUrl, sim.clientId, sim.clientSecret, ...sim.redirectUris]) {
      expect(banner).toContain(text);
    }
    for (const user of sim.users) {
      expect(banner).toMatch(
        new RegExp(`${user.email.replace('.', '\\.')}\\s+${user.timezone}\\s+${user.id}`),
      );
    }
  });
});
