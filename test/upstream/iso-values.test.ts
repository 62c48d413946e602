import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import {
  calendarDateIn,
  isCalendarDate,
  isSameZone,
  normalisedUtcInstant,
} from '../../src/upstream/iso-values.js';

describe('isCalendarDate', () => {
  it('takes what luxon takes for a day, and nothing else: months and days that do not exist, leap days', () => {
    const pad = (n: number, width: number) => String(n).padStart(width, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        (year, month, day) => {
          const value = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
          expect(isCalendarDate(value)).toBe(DateTime.fromISO(value, { zone: 'utc' }).isValid);
        },
      ),
      { numRuns: 5000 },
    );
    expect(isCalendarDate('2028-02-29')).toBe(true);
    expect(isCalendarDate('2026-02-29')).toBe(false);
    expect(isCalendarDate('2026-2-28')).toBe(false);
    expect(isCalendarDate('2026-02-28T00:00:00Z')).toBe(false);
  });
});

describe('calendarDateIn', () => {
  it.each([
    // Berlin midnight of 5 March is 23:00 UTC the day before: the written date is not the day meant.
    ['Berlin midnight in UTC', '2026-03-04T23:00:00Z', 'Europe/Berlin', '2026-03-05'],
    ['Berlin midnight with its offset', '2026-03-05T00:00:00+01:00', 'Europe/Berlin', '2026-03-05'],
    ['an offset without a colon', '2026-03-05T00:00:00+0100', 'Europe/Berlin', '2026-03-05'],
    ['summer time', '2026-06-30T22:00:00Z', 'Europe/Berlin', '2026-07-01'],
    ['a half-hour zone', '2026-03-04T18:30:00Z', 'Asia/Kolkata', '2026-03-05'],
    ['a zone behind UTC', '2026-03-05T03:00:00Z', 'America/New_York', '2026-03-04'],
    ['fractional seconds', '2026-03-04T23:00:00.123456789Z', 'Europe/Berlin', '2026-03-05'],
    // Without an offset a date-time is wall-clock time in the zone asked for: its date is the one written.
    ['no offset', '2026-03-04T23:00:00', 'Europe/Berlin', '2026-03-04'],
    ['no offset nor seconds', '2026-03-05T00:00', 'America/New_York', '2026-03-05'],
    ['no offset, in the spring-forward gap', '2026-03-29T02:30:00', 'Europe/Berlin', '2026-03-29'],
    ['a plain date', '2026-03-05', 'Pacific/Kiritimati', '2026-03-05'],
  ])('reads %s as the date meant', (_label, value, zone, date) => {
    expect(calendarDateIn(value, zone)).toBe(date);
  });

  it.each([
    ['an impossible date', '2026-02-29T09:00:00Z'],
    ['hour 24', '2026-03-05T24:00:00'],
    ['a week date', '2026-W10-4'],
    ['words', 'tomorrow'],
    ['a date with a space', '2026-03-05 00:00:00'],
    ['year zero day zero', '0000-00-00'],
  ])('refuses %s', (_label, value) => {
    expect(calendarDateIn(value, 'Europe/Berlin')).toBeUndefined();
  });

  it('refuses a zone that is not one', () => {
    expect(calendarDateIn('2026-03-04T23:00:00Z', 'Mars/Olympus_Mons')).toBeUndefined();
  });
});

describe('isSameZone', () => {
  it('holds for one name, its aliases and another letter case', () => {
    expect(isSameZone('Europe/Berlin', 'Europe/Berlin')).toBe(true);
    expect(isSameZone('Asia/Calcutta', 'Asia/Kolkata')).toBe(true);
    expect(isSameZone('Etc/UTC', 'UTC')).toBe(true);
    expect(isSameZone('europe/berlin', 'Europe/Berlin')).toBe(true);
  });

  it('fails for different zones, even with the same offset today', () => {
    expect(isSameZone('UTC', 'Europe/Berlin')).toBe(false);
    expect(isSameZone('Europe/Berlin', 'Europe/Paris')).toBe(false);
    expect(isSameZone('Europe/Berlin', '+01:00')).toBe(false);
    expect(isSameZone('Europe/Berlin', 'Mars/Olympus_Mons')).toBe(false);
  });
});

describe('normalisedUtcInstant', () => {
  it.each([
    ['2026-03-04T23:00:00Z', '2026-03-04T23:00:00.000Z'],
    ['2026-03-04T23:00:00.5Z', '2026-03-04T23:00:00.500Z'],
    ['2026-03-04T23:00:00.123456789Z', '2026-03-04T23:00:00.123Z'],
    ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
  ])('writes %s as %s', (value, normalised) => {
    expect(normalisedUtcInstant(value)).toBe(normalised);
  });

  it.each(['2026-02-29T12:00:00Z', '2026-02-30T12:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z'])(
    'refuses %s, a day that does not exist',
    (value) => {
      expect(normalisedUtcInstant(value)).toBeUndefined();
    },
  );

  it('agrees with luxon on every date-time of the format, the days that do not exist included', () => {
    const twoDigits = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
        twoDigits(13),
        twoDigits(32),
        twoDigits(23),
        twoDigits(59),
        fc.option(fc.integer({ min: 0, max: 999_999_999 }).map((n) => `.${n}`)),
        (year, month, day, hour, minute, fraction) => {
          const value = `${year}-${month}-${day}T${hour}:${minute}:07${fraction ?? ''}Z`;
          const parsed = DateTime.fromISO(value, { zone: 'utc' });
          const luxons = parsed.isValid ? (parsed.toUTC().toISO() ?? undefined) : undefined;
          expect([value, normalisedUtcInstant(value)]).toEqual([value, luxons]);
        },
      ),
      { numRuns: 5000 },
    );
  });
});
