// The relative times pages show beside a date: rounded to the nearest unit, the same for the same instant give or
// take a minute, in numbers.
import { describe, expect, it } from '@jest/globals';
import { relativeTime } from '../../src/web/time-format.js';

const NOW = new Date('2026-11-30T16:43:00Z');
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const MINUTE = 60;
const HOUR = 3600;
const DAY = 24 * HOUR;

describe('relativeTime', () => {
  it('says a 7-day link "in 7 days" whether it was made now or a minute ago', () => {
    expect(relativeTime(later(7 * DAY), NOW)).toBe('in 7 days');
    expect(relativeTime(later(7 * DAY - MINUTE), NOW)).toBe('in 7 days');
    expect(relativeTime(later(7 * DAY - 2 * MINUTE), NOW)).toBe('in 7 days');
  });

  it('says a 1-day link "in 1 day" a minute after it was made, not "in 23 hours" or "tomorrow"', () => {
    expect(relativeTime(later(DAY - MINUTE), NOW)).toBe('in 1 day');
    expect(relativeTime(later(-DAY), NOW)).toBe('1 day ago');
  });

  it('rounds to the nearest unit and moves up once the rounded count reaches the next one', () => {
    expect(relativeTime(later(10), NOW)).toBe('just now');
    expect(relativeTime(later(-40), NOW)).toBe('1 minute ago');
    expect(relativeTime(later(59 * MINUTE + 40), NOW)).toBe('in 1 hour');
    expect(relativeTime(later(90 * MINUTE), NOW)).toBe('in 2 hours');
    expect(relativeTime(later(-5 * HOUR), NOW)).toBe('5 hours ago');
    expect(relativeTime(later(13 * DAY), NOW)).toBe('in 13 days');
    expect(relativeTime(later(14 * DAY), NOW)).toBe('in 2 weeks');
    expect(relativeTime(later(60 * DAY), NOW)).toBe('in 2 months');
    expect(relativeTime(later(400 * DAY), NOW)).toBe('in 1 year');
  });

  it('reads a span ago as the same span ahead, halfway cases included', () => {
    for (const seconds of [30, 90, 23.5 * HOUR, 13.5 * DAY, 59.5 * DAY]) {
      const ahead = relativeTime(later(seconds), NOW);
      expect(relativeTime(later(-seconds), NOW)).toBe(ahead.replace(/^in (.*)$/, '$1 ago'));
    }
    expect(relativeTime(later(-30), NOW)).toBe('1 minute ago');
    expect(relativeTime(new Date(Number.NaN), NOW)).toBe('just now');
  });
});
