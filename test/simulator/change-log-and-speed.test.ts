// The simulator as a freshness yardstick: it records when each booking was made or freed (on its own clock),
// and its clock can run compressed, so hours of bookings, token lifetimes and passing slots take minutes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createSimClock } from '../../src/simulator/clock.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { simHttp } from './sim-client.js';

describe('a compressed clock', () => {
  it('runs `speed` simulated seconds per second of its base clock, from when it was made', () => {
    let baseMs = Date.parse('2026-03-02T09:00:00Z');
    const clock = createSimClock(() => new Date(baseMs), 60);
    expect(new Date(clock.nowMs()).toISOString()).toBe('2026-03-02T09:00:00.000Z');
    baseMs += 1000;
    expect(new Date(clock.nowMs()).toISOString()).toBe('2026-03-02T09:01:00.000Z');
    baseMs += 59_000;
    expect(new Date(clock.nowMs()).toISOString()).toBe('2026-03-02T10:00:00.000Z');
    // Setting and advancing still work on the simulated time.
    clock.advance(3600);
    expect(new Date(clock.nowMs()).toISOString()).toBe('2026-03-02T11:00:00.000Z');
    clock.set(Date.parse('2026-03-03T00:00:00Z'));
    baseMs += 1000;
    expect(new Date(clock.nowMs()).toISOString()).toBe('2026-03-03T00:01:00.000Z');
    expect(() => createSimClock(() => new Date(baseMs), 0)).toThrow('clock speed must be above 0');
  });
});

describe('the change log', () => {
  let sim: RunningSimulator;
  let baseMs = Date.parse('2026-03-02T09:00:00Z');

  beforeAll(async () => {
    sim = await startSimulator({ now: () => new Date(baseMs), clockSpeed: 60, users: 2 });
  });
  afterAll(() => sim.close());

  it('records each booking made and freed, with when it happened on the simulated clock', async () => {
    const user = sim.control.listUsers()[0]!;
    const event = user.event_types.find((e) => e.enabled)!;
    const from = new Date(baseMs).toISOString();
    const to = new Date(baseMs + 7 * 86_400_000).toISOString();
    const [first, second] = sim.control.slotsFor(event.event_id, from, to);
    sim.control.book(event.event_id, first!);
    baseMs += 30_000; // half a minute of the base clock: half an hour simulated
    const { status } = await simHttp(sim, 'POST', '/bookings', { eventId: event.event_id, start: second });
    expect(status).toBe(201);
    sim.control.free(event.event_id, first!);

    const changes = (await simHttp(sim, 'GET', '/changes')).json as ReturnType<typeof sim.control.changes>;
    expect(changes).toEqual(sim.control.changes());
    const change = (kind: 'booked' | 'freed', start: string, at: string) => ({
      kind,
      userId: user.id,
      eventId: event.event_id,
      startMs: Date.parse(start),
      endMs: Date.parse(start) + event.duration_minutes * 60_000,
      atMs: Date.parse(at),
    });
    expect(changes).toEqual([
      change('booked', first!, '2026-03-02T09:00:00Z'),
      change('booked', second!, '2026-03-02T09:30:00Z'),
      change('freed', first!, '2026-03-02T09:30:00Z'),
    ]);
  });
});
