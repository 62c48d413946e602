import { describe, expect, it } from '@jest/globals';
import { parseRetryAfter } from '../../src/upstream/errors.js';

const NOW = new Date('2026-03-02T09:00:00Z');

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('2', NOW)).toBe(2000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
  });

  it('reads an IMF-fixdate relative to the injected now', () => {
    expect(parseRetryAfter('Mon, 02 Mar 2026 09:00:30 GMT', NOW)).toBe(30_000);
  });

  it('reads the obsolete RFC 850 and asctime forms', () => {
    expect(parseRetryAfter('Monday, 02-Mar-26 09:01:00 GMT', NOW)).toBe(60_000);
    expect(parseRetryAfter('Mon Mar  2 09:00:05 2026', NOW)).toBe(5000);
  });

  it('says "retry now" for a date already past', () => {
    expect(parseRetryAfter('Mon, 02 Mar 2026 08:00:00 GMT', NOW)).toBe(0);
  });

  it.each([
    ['absent', null],
    ['empty', ''],
    ['negative', '-5'],
    ['fractional', '1.5'],
    ['words', 'soon'],
    ['ISO date', '2026-03-02T09:00:30Z'],
    ['impossible day', 'Mon, 30 Feb 2026 09:00:00 GMT'],
    ['impossible hour', 'Mon, 02 Mar 2026 25:00:00 GMT'],
    ['unknown month', 'Mon, 02 Foo 2026 09:00:00 GMT'],
    ['not GMT', 'Mon, 02 Mar 2026 09:00:30 CET'],
    ['too large to be a time', '99999999999999999999'],
  ])('gives undefined for garbage (%s)', (_label, value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });
});
