// The dates of a zone and the instants they begin (lib/zone-days.ts), which readOpenDates hands Postgres instead
// of the zone's name: an instant put between two of those instants, as width_bucket puts a slot, is on the date
// luxon gives it, across DST changes, a midnight DST skips, and a zone Postgres does not know.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { zoneDaysBetween } from '../../src/lib/zone-days.js';

const ZONES = [
  'US/Pacific-New',
  'Europe/Berlin',
  'America/Santiago', // DST starts at midnight: the first instant of that date is 01:00
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Asia/Kolkata',
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
