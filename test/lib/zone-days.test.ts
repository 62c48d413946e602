// The dates of a zone and the instants they begin (lib/zone-days.ts), which readOpenDates hands Postgres instead
// of the zone's name: an instant put between two of those instants, as width_bucket puts a slot, is on the date
// luxon gives it, across DST changes, a midnight DST skips, and a zone Postgres does not know.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { dateAfter, localDateOf, startOfDateIn, zoneDaysBetween } from '../../src/lib/zone-days.js';

const ZONES = [
  'US/Pacific-New',
  'Europe/Berlin',
  'America/Santiago', // DST starts at midnight: the first instant of that date is 01:00
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Asia/Kolkata',
  'Atlantic/Azores', // falls back at 01:00 to 00:00 in October: that date's midnight comes twice
  'America/Havana', // the same in November
];

describe('zoneDaysBetween', () => {
  it('puts every instant of the range on the date luxon gives it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.date({ min: new Date('2026-01-01'), max: new Date('2027-12-31'), noInvalidDate: true }),
        fc.integer({ min: 1, max: 40 * 24 }),
        fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
          minLength: 1,
          maxLength: 20,
        }),
        (zone, from, hours, at) => {
          const until = new Date(from.getTime() + hours * 3_600_000);
          const days = zoneDaysBetween(zone, from, until);
          expect(days[0]!.startsAt.getTime()).toBeLessThanOrEqual(from.getTime());
          expect(days.at(-1)!.startsAt.getTime()).toBeLessThan(until.getTime());
          for (const share of at) {
            const instant = from.getTime() + Math.floor(share * (until.getTime() - from.getTime()));
            const bucket = days.filter((day) => day.startsAt.getTime() <= instant).at(-1)!;
            expect(bucket.date).toBe(DateTime.fromMillis(instant, { zone }).toISODate());
          }
        },
      ),
    );
  });

  it('begins the date DST skips midnight on at its first instant', () => {
    const [, skipped] = zoneDaysBetween(
      'America/Santiago',
      new Date('2026-09-05T12:00:00Z'),
      new Date('2026-09-06T12:00:00Z'),
    );
    expect(skipped).toEqual({ date: '2026-09-06', startsAt: new Date('2026-09-06T04:00:00Z') });
  });

  it('refuses a zone luxon does not know, naming it', () => {
    expect(() => zoneDaysBetween('Mars/Olympus_Mons', new Date(), new Date())).toThrow(
      '"Mars/Olympus_Mons" is not a time zone luxon knows',
    );
  });
});

describe('localDateOf', () => {
  const luxonDate = (ms: number, zone: string) => DateTime.fromMillis(ms, { zone }).toISODate();

  it('gives every instant the date luxon gives it, on either side of each offset change', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES, 'Asia/Kathmandu', 'America/St_Johns', 'Africa/Casablanca'),
        fc.date({ min: new Date('1969-01-01'), max: new Date('2040-12-31'), noInvalidDate: true }),
        (zone, instant) => {
          // Twice: the second answer comes from the offsets remembered by the first.
          expect(localDateOf(instant, zone)).toBe(luxonDate(instant.getTime(), zone));
          expect(localDateOf(instant, zone)).toBe(luxonDate(instant.getTime(), zone));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('reads the hours around a change of offset exactly, minute by minute', () => {
    // Lord Howe moves by half an hour at 02:00 local; Santiago skips midnight; Chatham sits at +12:45/+13:45.
    // St John's fell back at 00:01 local until 2011, half past a UTC hour: in that hour the date goes back.
    const changes: Array<[string, string]> = [
      ['America/St_Johns', '2010-11-07T02:31:00Z'],
      ['Australia/Lord_Howe', '2026-10-03T15:00:00Z'],
      ['America/Santiago', '2026-09-06T04:00:00Z'],
      ['Pacific/Chatham', '2026-09-26T14:00:00Z'],
      ['Europe/Berlin', '2026-10-25T01:00:00Z'],
    ];
    for (const [zone, at] of changes) {
      for (let minute = -180; minute <= 180; minute++) {
        const ms = Date.parse(at) + minute * 60_000;
        expect([zone, minute, localDateOf(new Date(ms), zone)]).toEqual([zone, minute, luxonDate(ms, zone)]);
      }
    }
  });

  it('gives null for a zone luxon does not know, as luxon does', () => {
    expect(localDateOf(new Date('2026-05-01T12:00:00Z'), 'Mars/Olympus_Mons')).toBeNull();
  });
});

describe('startOfDateIn and dateAfter', () => {
  it('begin each date at its first instant: on the date, with the instant before it on the day before', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES, 'Asia/Kathmandu', 'America/St_Johns', 'Pacific/Apia'),
        fc.date({ min: new Date('2000-01-02'), max: new Date('2040-12-30'), noInvalidDate: true }),
        (zone, day) => {
          const date = day.toISOString().slice(0, 10);
          const starts = startOfDateIn(date, zone);
          const luxonDate = (ms: number) => DateTime.fromMillis(ms, { zone }).toISODate()!;
          expect([zone, date, luxonDate(starts) >= date, luxonDate(starts - 1) < date]).toEqual([
            zone,
            date,
            true,
            true,
          ]);
          // Asked again, from the memory: the same.
          expect(startOfDateIn(date, zone)).toBe(starts);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('begins a date at its first midnight where it comes twice, and where DST skips it at the change', () => {
    // Whatever the time of year it is asked in (luxon's fromISO picks by the offset of the day it is asked on).
    expect(new Date(startOfDateIn('2026-10-25', 'Atlantic/Azores')).toISOString()).toBe(
      '2026-10-25T00:00:00.000Z',
    );
    expect(new Date(startOfDateIn('2026-09-06', 'America/Santiago')).toISOString()).toBe(
      '2026-09-06T04:00:00.000Z',
    );
    // Samoa skipped 30 December 2011: it begins, and ends, where 31 December begins.
    expect(startOfDateIn('2011-12-30', 'Pacific/Apia')).toBe(startOfDateIn('2011-12-31', 'Pacific/Apia'));
    expect(startOfDateIn('2026-05-01', 'Mars/Olympus_Mons')).toBeNaN();
  });

  it('count calendar days across month and year ends, and refuse what is not a date', () => {
    expect(dateAfter('2026-12-31', 1)).toBe('2027-01-01');
    expect(dateAfter('2024-03-01', -1)).toBe('2024-02-29');
    expect(dateAfter('2026-03-28', 2)).toBe('2026-03-30');
    expect(() => dateAfter('tomorrow', 1)).toThrow('"tomorrow" is not a date (YYYY-MM-DD)');
    expect(() => dateAfter('2026-02-30', 1)).toThrow('"2026-02-30" is not a date (YYYY-MM-DD)');
  });
});
