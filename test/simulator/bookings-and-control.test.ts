// Bookings take time away from all the owner's event types (with each type's buffers); event type edits show
// up in the API; the /__sim/ HTTP routes behave like the in-process control.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunningSimulator } from '../../src/simulator/index.js';
import type { TokenSet } from './sim-client.js';
import { apiGet, connectUser, simHttp, slotKeys, startFixedSimulator } from './sim-client.js';
import { exactEvent } from './sim-setup.js';

let sim: RunningSimulator;
let tokens: TokenSet;
let userId: string;
let introId: string; // 30 min, no buffers
let deepId: string; // 60 min, 10 min before, 15 min after

const DAY = '2026-03-10'; // a Tuesday; Berlin is UTC+1, so 09:00 local = 08:00Z
const slotsOn = (eventId: string) => slotKeys(sim, tokens.access_token, eventId, DAY, 'Europe/Berlin');

beforeAll(async () => {
  sim = await startFixedSimulator();
  tokens = await connectUser(sim, 0);
  const hours = { tue: [{ start: '09:00', end: '12:00' }] };
  introId = exactEvent(sim, 0, { hours, durationMinutes: 30 });
  userId = sim.users[0]?.id ?? '';
  deepId = sim.control.listUsers()[0]?.event_types[1]?.event_id ?? '';
  sim.control.updateEventType(userId, deepId, {
    enabled: true,
    duration_minutes: 60,
    buffer_before_minutes: 10,
    buffer_after_minutes: 15,
    max_days_ahead: 60,
  });
});
afterAll(() => sim.close());

const INTRO_ALL = [
  '2026-03-10T08:00:00Z',
  '2026-03-10T08:30:00Z',
  '2026-03-10T09:00:00Z',
  '2026-03-10T09:30:00Z',
  '2026-03-10T10:00:00Z',
  '2026-03-10T10:30:00Z',
];
const DEEP_ALL = ['2026-03-10T08:00:00Z', '2026-03-10T09:00:00Z', '2026-03-10T10:00:00Z'];

describe('bookings', () => {
  it('starts from the exact expected slots', async () => {
    expect(await slotsOn(introId)).toEqual(INTRO_ALL);
    expect(await slotsOn(deepId)).toEqual(DEEP_ALL);
  });

  it('booking removes the slot, and the slots of other event types whose buffers reach it; freeing restores', async () => {
    sim.control.book(introId, '2026-03-10T09:00:00Z');
    expect(await slotsOn(introId)).toEqual(INTRO_ALL.filter((s) => s !== '2026-03-10T09:00:00Z'));
    // 08:00Z deep dive + 15 min after-buffer reaches 09:15Z: overlaps the 09:00–09:30 booking.
    expect(await slotsOn(deepId)).toEqual(['2026-03-10T10:00:00Z']);
    expect(sim.control.listUsers()[0]?.bookings).toContainEqual({
      event_id: introId,
      start: '2026-03-10T09:00:00Z',
      end: '2026-03-10T09:30:00Z',
    });
    sim.control.free(introId, '2026-03-10T09:00:00Z');
    expect(await slotsOn(introId)).toEqual(INTRO_ALL);
    expect(await slotsOn(deepId)).toEqual(DEEP_ALL);
  });

  it('the before-buffer counts too, and touching ends do not clash', async () => {
    sim.control.book(introId, '2026-03-10T10:30:00Z'); // 10:30–11:00Z
    // Deep dive 10:00Z would need [09:50, 11:15]: clashes. 09:00Z needs [08:50, 10:15]: free.
    expect(await slotsOn(deepId)).toEqual(['2026-03-10T08:00:00Z', '2026-03-10T09:00:00Z']);
    expect(await slotsOn(introId)).toEqual(INTRO_ALL.slice(0, 5));
    sim.control.free(introId, '2026-03-10T10:30:00Z');
  });

  it('refuses a slot that is not offered (409) and freeing what is not booked (404)', async () => {
    expect(() => sim.control.book(introId, '2026-03-10T09:15:00Z')).toThrow(/not currently offered/);
    const notOffered = await simHttp(sim, 'POST', '/bookings', {
      eventId: introId,
      start: '2026-03-10T09:15:00Z',
    });
    expect(notOffered.status).toBe(409);
    const free = await simHttp(sim, 'DELETE', '/bookings', {
      eventId: introId,
      start: '2026-03-10T08:00:00Z',
    });
    expect(free.status).toBe(404);
    const bad = await simHttp(sim, 'POST', '/bookings', { eventId: introId, start: '2026-03-10 08:00' });
    expect(bad.status).toBe(400);
  });

  it('answers a booking with a line of JSON, newline included, as curl shows it in a terminal', async () => {
    const response = await fetch(`${sim.origin}/__sim/bookings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ eventId: introId, start: '2026-03-10T09:30:00Z' }),
    });
    expect(response.status).toBe(201);
    expect(await response.text()).toBe('{"booked":true}\n');
    const refused = await fetch(`${sim.origin}/__sim/bookings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ eventId: introId, start: '2026-03-10T09:30:00Z' }),
    });
    expect(await refused.text()).toMatch(/^\{"error":"control_error",.*\}\n$/);
    sim.control.free(introId, '2026-03-10T09:30:00Z');
  });

  it('books and frees over HTTP; a booked slot cannot be booked twice', async () => {
    const booking = { eventId: introId, start: '2026-03-10T08:30:00Z' };
    expect((await simHttp(sim, 'POST', '/bookings', booking)).status).toBe(201);
    expect((await simHttp(sim, 'POST', '/bookings', booking)).status).toBe(409);
    expect(await slotsOn(introId)).not.toContain('2026-03-10T08:30:00Z');
    expect((await simHttp(sim, 'DELETE', '/bookings', booking)).status).toBe(204);
    expect(await slotsOn(introId)).toContain('2026-03-10T08:30:00Z');
  });
});

describe('control over HTTP', () => {
  it('PUT weekly-hours changes the slots; invalid hours are a 400', async () => {
    const put = await simHttp(sim, 'PUT', `/users/${userId}/weekly-hours`, {
      tue: [{ start: '14:00', end: '15:00' }],
    });
    expect(put.status).toBe(204);
    expect(await slotsOn(introId)).toEqual(['2026-03-10T13:00:00Z', '2026-03-10T13:30:00Z']);
    const bad = await simHttp(sim, 'PUT', `/users/${userId}/weekly-hours`, {
      tue: [{ start: '15:00', end: '14:00' }],
    });
    expect(bad.status).toBe(400);
    const unknownDay = await simHttp(sim, 'PUT', `/users/${userId}/weekly-hours`, { tuesday: [] });
    expect(unknownDay.status).toBe(400);
    sim.control.setWeeklyHours(userId, { tue: [{ start: '09:00', end: '12:00' }] });
  });

  it('PATCH an event type shows in GET /events; disabling empties its slots', async () => {
    const patch = await simHttp(sim, 'PATCH', `/users/${userId}/events/${introId}`, {
      title: 'Renamed',
      enabled: false,
    });
    expect(patch.status).toBe(200);
    expect(patch.json).toMatchObject({ event_id: introId, title: 'Renamed', enabled: false });
    const events = (await (await apiGet(sim, '/events', tokens.access_token)).json()) as {
      event_id: string;
      title: string;
    }[];
    expect(events.find((e) => e.event_id === introId)?.title).toBe('Renamed');
    expect(await slotsOn(introId)).toEqual([]);
    expect(
      (await simHttp(sim, 'PATCH', `/users/${userId}/events/${introId}`, { duration_minutes: '30' })).status,
    ).toBe(400);
    sim.control.updateEventType(userId, introId, { enabled: true });
    expect(await slotsOn(introId)).toEqual(INTRO_ALL);
  });

  it('DELETE an event type: gone from /events, 404 on its calendar', async () => {
    const victim = sim.control.listUsers()[0]?.event_types[2]?.event_id ?? '';
    expect((await simHttp(sim, 'DELETE', `/users/${userId}/events/${victim}`)).status).toBe(204);
    const events = (await (await apiGet(sim, '/events', tokens.access_token)).json()) as {
      event_id: string;
    }[];
    expect(events.map((e) => e.event_id)).not.toContain(victim);
    const response = await apiGet(
      sim,
      `/calendars/${victim}/slots?date=${DAY}&timezone=UTC`,
      tokens.access_token,
    );
    expect(response.status).toBe(404);
    expect((await simHttp(sim, 'DELETE', `/users/${userId}/events/${victim}`)).status).toBe(404);
  });

  it('POST revoke ends the user’s tokens; unknown users are a 404', async () => {
    const other = await connectUser(sim, 1);
    const revoke = await simHttp(sim, 'POST', `/users/${sim.users[1]?.id}/revoke`);
    expect(revoke).toEqual({ status: 200, json: { revoked: 1 } });
    expect((await apiGet(sim, '/users/me', other.access_token)).status).toBe(401);
    expect((await apiGet(sim, '/users/me', tokens.access_token)).status).toBe(200);
    expect((await simHttp(sim, 'POST', '/users/usr_nobody/revoke')).status).toBe(404);
  });

  it('clock routes set and advance the simulated time', async () => {
    expect(await simHttp(sim, 'PUT', '/clock', { now: '2026-03-05T00:00:00Z' })).toEqual({
      status: 200,
      json: { now: '2026-03-05T00:00:00.000Z' },
    });
    expect(await simHttp(sim, 'POST', '/clock/advance', { seconds: 90 })).toEqual({
      status: 200,
      json: { now: '2026-03-05T00:01:30.000Z' },
    });
    expect((await simHttp(sim, 'PUT', '/clock', { now: 'tomorrow' })).status).toBe(400);
    expect((await simHttp(sim, 'POST', '/clock/advance', { seconds: 'x' })).status).toBe(400);
    sim.control.setClock('2026-03-02T09:00:00Z');
  });
});
