// Slot generation in the owner's zone: DST changes, half-hour zones, midnight-crossing shifts, disabled dates,
// horizon and "now". Hours are set explicitly so each expectation is an exact list of UTC instants.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunningSimulator } from '../../src/simulator/index.js';
import type { TokenSet } from './sim-client.js';
import { REFERENCE_NOW, apiGet, connectUser, slotKeys, startFixedSimulator } from './sim-client.js';
import { everyDay, exactEvent } from './sim-setup.js';

let sim: RunningSimulator;
const tokens: TokenSet[] = [];

beforeAll(async () => {
  sim = await startFixedSimulator();
  for (let i = 0; i < 5; i++) tokens.push(await connectUser(sim, i));
});
afterAll(() => sim.close());
afterEach(() => sim.control.setClock(REFERENCE_NOW));

const token = (i: number) => tokens[i]?.access_token ?? '';

describe('DST in the owner zone', () => {
  it('Europe/Berlin: 09:00 local is 08:00Z before 2026-03-29 and 07:00Z after', async () => {
    const eventId = exactEvent(sim, 0, { hours: everyDay('09:00', '10:00'), durationMinutes: 60 });
    expect(await slotKeys(sim, token(0), eventId, '2026-03-27', 'UTC')).toEqual(['2026-03-27T08:00:00Z']);
    expect(await slotKeys(sim, token(0), eventId, '2026-03-28', 'UTC')).toEqual(['2026-03-28T08:00:00Z']);
    expect(await slotKeys(sim, token(0), eventId, '2026-03-29', 'UTC')).toEqual(['2026-03-29T07:00:00Z']);
    expect(await slotKeys(sim, token(0), eventId, '2026-03-30', 'UTC')).toEqual(['2026-03-30T07:00:00Z']);
  });

  it('Europe/Berlin: local times in the spring-forward gap are skipped', async () => {
    const eventId = exactEvent(sim, 0, {
      hours: { sun: [{ start: '01:00', end: '04:00' }] },
      durationMinutes: 30,
    });
    expect(await slotKeys(sim, token(0), eventId, '2026-03-29', 'Europe/Berlin')).toEqual([
      '2026-03-29T00:00:00Z', // 01:00 CET
      '2026-03-29T00:30:00Z', // 01:30 CET
      '2026-03-29T01:00:00Z', // 03:00 CEST (02:00 and 02:30 do not exist)
      '2026-03-29T01:30:00Z', // 03:30 CEST
    ]);
  });

  it('America/New_York: 09:00 local is 13:00Z before 2026-11-01 and 14:00Z after', async () => {
    sim.control.setClock('2026-10-20T12:00:00Z');
    const octoberToken = (await connectUser(sim, 1)).access_token;
    const eventId = exactEvent(sim, 1, { hours: everyDay('09:00', '10:00'), durationMinutes: 60 });
    const day = (date: string) => slotKeys(sim, octoberToken, eventId, date, 'America/New_York');
    expect(await day('2026-10-31')).toEqual(['2026-10-31T13:00:00Z']);
    expect(await day('2026-11-01')).toEqual(['2026-11-01T14:00:00Z']);
    expect(await day('2026-11-02')).toEqual(['2026-11-02T14:00:00Z']);
  });

  it('America/New_York: a local time repeated by the fall-back appears once', async () => {
    sim.control.setClock('2026-10-20T12:00:00Z');
    const octoberToken = (await connectUser(sim, 1)).access_token;
    const eventId = exactEvent(sim, 1, {
      hours: { sun: [{ start: '00:00', end: '03:00' }] },
      durationMinutes: 60,
    });
    const slots = await slotKeys(sim, octoberToken, eventId, '2026-11-01', 'America/New_York');
    const localTimes = slots.map((s) =>
      new Date(s).toLocaleTimeString('en-GB', {
        timeZone: 'America/New_York',
        hour: '2-digit',
        minute: '2-digit',
      }),
    );
    expect(localTimes).toEqual(['00:00', '01:00', '02:00']);
    // 01:00 resolves to its first occurrence (EDT); 01:00 EST is not offered a second time.
    expect(slots).toEqual(['2026-11-01T04:00:00Z', '2026-11-01T05:00:00Z', '2026-11-01T07:00:00Z']);
  });

  it('Australia/Lord_Howe: the 30-minute DST shift moves 09:00 from 22:00Z to 22:30Z (prior UTC day)', async () => {
    const eventId = exactEvent(sim, 4, { hours: everyDay('09:00', '09:30'), durationMinutes: 30 });
    const day = (date: string) => slotKeys(sim, token(4), eventId, date, 'Australia/Lord_Howe');
    expect(await day('2026-04-04')).toEqual(['2026-04-03T22:00:00Z']);
    expect(await day('2026-04-06')).toEqual(['2026-04-05T22:30:00Z']);
  });
});

describe('non-hour offsets and shifts across UTC midnight', () => {
  it('Asia/Kolkata: 09:00 local is 03:30Z', async () => {
    const eventId = exactEvent(sim, 2, {
      hours: { tue: [{ start: '09:00', end: '10:30' }] },
      durationMinutes: 45,
    });
    expect(await slotKeys(sim, token(2), eventId, '2026-03-03', 'Asia/Kolkata')).toEqual([
      '2026-03-03T03:30:00Z',
      '2026-03-03T04:15:00Z',
    ]);
  });

  it('America/St_Johns: 09:00 local is 12:30Z in NST and 11:30Z in NDT', async () => {
    const eventId = exactEvent(sim, 3, { hours: everyDay('09:00', '09:30'), durationMinutes: 30 });
    expect(await slotKeys(sim, token(3), eventId, '2026-03-06', 'UTC')).toEqual(['2026-03-06T12:30:00Z']);
    expect(await slotKeys(sim, token(3), eventId, '2026-03-09', 'UTC')).toEqual(['2026-03-09T11:30:00Z']);
  });

  it('a late shift in New York fills the next UTC date; the guest zone decides which date a slot is on', async () => {
    const eventId = exactEvent(sim, 1, {
      hours: { tue: [{ start: '15:00', end: '23:00' }], wed: [{ start: '15:00', end: '23:00' }] },
      durationMinutes: 60,
    });
    expect(await slotKeys(sim, token(1), eventId, '2026-03-04', 'UTC')).toEqual([
      '2026-03-04T00:00:00Z',
      '2026-03-04T01:00:00Z',
      '2026-03-04T02:00:00Z',
      '2026-03-04T03:00:00Z',
      '2026-03-04T20:00:00Z',
      '2026-03-04T21:00:00Z',
      '2026-03-04T22:00:00Z',
      '2026-03-04T23:00:00Z',
    ]);
    const local = await slotKeys(sim, token(1), eventId, '2026-03-03', 'America/New_York');
    expect(local).toHaveLength(8);
    expect(local[0]).toBe('2026-03-03T20:00:00Z');
    expect(local[7]).toBe('2026-03-04T03:00:00Z');
  });

  it('a range ending at 24:00 offers its last slot before local midnight', async () => {
    const eventId = exactEvent(sim, 2, {
      hours: { wed: [{ start: '23:00', end: '24:00' }] },
      durationMinutes: 30,
    });
    expect(await slotKeys(sim, token(2), eventId, '2026-03-04', 'Asia/Kolkata')).toEqual([
      '2026-03-04T17:30:00Z',
      '2026-03-04T18:00:00Z',
    ]);
  });
});

describe('now, disabled dates and the horizon', () => {
  it('offers no slot at or before now', async () => {
    // now = 09:00Z = 10:00 Berlin, itself a candidate start: excluded because a slot must start after now.
    const eventId = exactEvent(sim, 0, { hours: everyDay('09:00', '12:00'), durationMinutes: 30 });
    const today = await slotKeys(sim, token(0), eventId, '2026-03-02', 'Europe/Berlin');
    expect(today).toEqual(['2026-03-02T09:30:00Z', '2026-03-02T10:00:00Z', '2026-03-02T10:30:00Z']);
  });

  it('disabled days and months have no slots and are reported by the overview', async () => {
    const eventId = exactEvent(sim, 0, { hours: everyDay('09:00', '10:00'), durationMinutes: 60 });
    const userId = sim.users[0]?.id ?? '';
    sim.control.setDisabledDates(userId, { days: ['2026-03-04', '2026-05-01'], months: [4] });
    expect(await slotKeys(sim, token(0), eventId, '2026-03-04', 'Europe/Berlin')).toEqual([]);
    expect(await slotKeys(sim, token(0), eventId, '2026-03-05', 'Europe/Berlin')).toHaveLength(1);
    expect(await slotKeys(sim, token(0), eventId, '2026-04-15', 'Europe/Berlin')).toEqual([]);
    const response = await apiGet(
      sim,
      `/calendars/${eventId}?start_date=2026-03-02&timezone=Europe/Berlin&period=1m`,
      token(0),
    );
    const body = (await response.json()) as {
      availability: { disabled_dates: { days: string[]; months: number[] }; available_dates: string[] };
    };
    expect(body.availability.disabled_dates).toEqual({ days: ['2026-03-04'], months: [4] });
    expect(body.availability.available_dates).not.toContain('2026-03-04');
    expect(body.availability.available_dates).toContain('2026-03-05');
  });

  it('nothing is bookable past today + max_days_ahead (owner-local dates)', async () => {
    const eventId = exactEvent(sim, 0, {
      hours: everyDay('09:00', '10:00'),
      durationMinutes: 60,
      maxDaysAhead: 10,
    });
    expect(await slotKeys(sim, token(0), eventId, '2026-03-12', 'Europe/Berlin')).toHaveLength(1);
    expect(await slotKeys(sim, token(0), eventId, '2026-03-13', 'Europe/Berlin')).toEqual([]);
    const response = await apiGet(sim, `/calendars/${eventId}?start_date=2026-03-02&timezone=UTC`, token(0));
    const body = (await response.json()) as {
      availability: { first_available_date: string; last_available_date: string | null };
    };
    expect(body.availability.first_available_date).toBe('2026-03-03');
    expect(body.availability.last_available_date).toBe('2026-03-12');
  });

  it('control.slotsFor is the same ground truth as the endpoint', async () => {
    const eventId = exactEvent(sim, 2, { hours: everyDay('09:00', '11:00'), durationMinutes: 30 });
    const fromApi = await slotKeys(sim, token(2), eventId, '2026-03-10', 'Asia/Kolkata');
    const truth = sim.control.slotsFor(eventId, '2026-03-09T18:30:00Z', '2026-03-10T18:30:00Z');
    expect(truth).toEqual(fromApi);
    expect(truth).toHaveLength(4);
  });
});
