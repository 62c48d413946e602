import { describe, expect, it } from '@jest/globals';
import { calendarDateIn, isSameZone } from '../../src/upstream/iso-values.js';

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
