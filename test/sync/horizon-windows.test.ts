import { describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import { horizonFrom, windowsCovering } from '../../src/sync/horizon-windows.js';

describe('horizon and overview windows', () => {
  it('starts the horizon on today in the connection zone, not in UTC', () => {
    // 2026-03-01T20:00Z is already 2 March in Tokyo (+09:00) and still 1 March in New York.
    const now = new Date('2026-03-01T20:00:00Z');
    expect(horizonFrom(now, 'Asia/Tokyo', 3).dates).toEqual(['2026-03-02', '2026-03-03', '2026-03-04']);
    expect(horizonFrom(now, 'America/New_York', 2).dates).toEqual(['2026-03-01', '2026-03-02']);
  });

  it('keeps every date across a DST change', () => {
    const horizon = horizonFrom(new Date('2026-03-28T12:00:00Z'), 'Europe/Berlin', 3);
    expect(horizon.dates).toEqual(['2026-03-28', '2026-03-29', '2026-03-30']);
  });

  it('gives the dates luxon gives, in zones of odd offsets and across their clock changes', () => {
    const zones = [
      'UTC',
      'Europe/Berlin',
      'America/New_York',
      'America/St_Johns',
      'America/Santiago',
      'Africa/Casablanca',
      'Asia/Kolkata',
      'Asia/Kathmandu',
      'Australia/Lord_Howe',
      'Pacific/Chatham',
      'Pacific/Kiritimati',
      'Etc/GMT+12',
    ];
    const luxonDates = (now: Date, zone: string, days: number) =>
      Array.from({ length: days }, (_, i) =>
        DateTime.fromJSDate(now, { zone }).startOf('day').plus({ days: i }).toISODate()!,
      );
    // Every 37 hours through 2026, so that each hour of the day comes round in every zone.
    for (
      let ms = Date.parse('2026-01-01T00:00:00Z');
      ms < Date.parse('2027-01-01T00:00:00Z');
      ms += 37 * 3_600_000
    ) {
      for (const zone of zones) {
        const now = new Date(ms);
        expect([zone, horizonFrom(now, zone, 8).dates]).toEqual([zone, luxonDates(now, zone, 8)]);
      }
    }
  });

  it('covers a 28-day horizon with one window', () => {
    const horizon = horizonFrom(new Date('2026-03-02T09:00:00Z'), 'UTC', 28);
    expect(windowsCovering(horizon)).toEqual([{ startDate: '2026-03-02', days: 28, period: '28d' }]);
  });

  it('splits a long horizon into the fewest windows below two months', () => {
    const horizon = horizonFrom(new Date('2026-12-31T09:00:00Z'), 'UTC', 120);
    const windows = windowsCovering(horizon);
    expect(windows.map((w) => w.period)).toEqual(['58d', '58d', '4d']);
    expect(windows.map((w) => w.startDate)).toEqual(['2026-12-31', '2027-02-27', '2027-04-26']);
    expect(windows.reduce((sum, w) => sum + w.days, 0)).toBe(120);
  });

  it('refuses a window of two months or more', () => {
    const horizon = horizonFrom(new Date('2026-03-02T09:00:00Z'), 'UTC', 10);
    expect(() => windowsCovering(horizon, 59)).toThrow(RangeError);
  });
});
