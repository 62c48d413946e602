// The record of when each slot start was last pulled is exact: after any sequence of partial pulls (ranges of
// dates moving on as days pass), the time it gives for an instant still ahead is the start of the latest pull
// whose range held it, as a log of every pull would say; it survives being stored; and it stays a few steps.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  coverageAfterPull,
  EVERY_SLOT_START,
  NEVER_PULLED,
  oldestPulledAt,
  rangeOfDates,
  readPullCoverage,
  slotStartPulledAt,
  stalenessBoundSeconds,
  storedPullCoverage,
  type PulledRange,
} from '../../src/store/pull-coverage.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-03-02T09:00:00Z');

/** A pull: how long after the previous one it began, and the ranges (in hours from T0) it covered. */
const pullArb = fc.record({
  afterHours: fc.integer({ min: 0, max: 30 }),
  ranges: fc.array(
    fc
      .tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 1, max: 200 }))
      .map(([from, length]) => ({ fromMs: T0 + from * HOUR, untilMs: T0 + (from + length) * HOUR })),
    { minLength: 1, maxLength: 3 },
  ),
});

describe('pull coverage', () => {
  it('gives, for every instant still ahead, the latest pull that covered it', () => {
    fc.assert(
      fc.property(
        fc.array(pullArb, { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: 700 })),
        (pulls, probes) => {
          let coverage = NEVER_PULLED;
          let at = T0;
          const log: { at: number; ranges: PulledRange[] }[] = [];
          for (const pull of pulls) {
            at += pull.afterHours * HOUR;
            coverage = readPullCoverage(
              storedPullCoverage(coverageAfterPull(coverage, pull.ranges, new Date(at), new Date(at))),
            );
            log.push({ at, ranges: pull.ranges });
          }
          for (const probe of probes) {
            const ms = T0 + probe * HOUR + 1;
            if (ms <= at) continue; // slots that started change nothing a bound measures
            const latest = log.filter((p) => p.ranges.some((r) => r.fromMs <= ms && ms < r.untilMs)).at(-1);
            expect(slotStartPulledAt(coverage, new Date(ms))?.getTime() ?? null).toBe(latest?.at ?? null);
          }
          expect(coverage.steps.length).toBeLessThanOrEqual(
            2 * log.reduce((n, p) => n + p.ranges.length, 0) + 1,
          );
        },
      ),
    );
  });

  it('bounds a change by its date’s last pull, or by the event types’ for one they showed', () => {
    const first = coverageAfterPull(NEVER_PULLED, [EVERY_SLOT_START], new Date(T0), new Date(T0));
    const near = rangeOfDates('Europe/Berlin', ['2026-03-02', '2026-03-03', '2026-03-04']);
    const later = new Date(T0 + 3 * HOUR);
    const second = coverageAfterPull(first, [near], later, later);
    const now = new Date(T0 + 3 * HOUR + 10 * 60_000);
    const farStart = new Date('2026-03-20T10:00:00Z');
    const nearStart = new Date('2026-03-03T10:00:00Z');
    expect(stalenessBoundSeconds(second, { startsAt: farStart, byEventTypeList: false }, now)).toBe(
      3 * 3600 + 600,
    );
    expect(stalenessBoundSeconds(second, { startsAt: nearStart, byEventTypeList: false }, now)).toBe(600);
    expect(stalenessBoundSeconds(second, { startsAt: farStart, byEventTypeList: true }, now)).toBe(600);
    expect(
      stalenessBoundSeconds(NEVER_PULLED, { startsAt: farStart, byEventTypeList: false }, now),
    ).toBeNull();
    // The near range's first date starts at Berlin's midnight (23:00Z the day before).
    expect(near.fromMs).toBe(Date.parse('2026-03-01T23:00:00Z'));
    expect(oldestPulledAt(second, [near])?.getTime()).toBe(later.getTime());
    expect(oldestPulledAt(second, [EVERY_SLOT_START])?.getTime()).toBe(T0);
    expect(oldestPulledAt(NEVER_PULLED, [near])).toBeNull();
  });

  it('ends a range of dates where the next date begins, across a midnight DST skips or repeats', () => {
    // Santiago skips midnight on 6 September: the day after the 5th begins at 01:00, 04:00Z, and the 6th ends
    // where the 7th begins (its midnight, 03:00Z), not an hour into it.
    expect(rangeOfDates('America/Santiago', ['2026-09-05'])).toEqual({
      fromMs: Date.parse('2026-09-05T04:00:00Z'),
      untilMs: Date.parse('2026-09-06T04:00:00Z'),
    });
    expect(rangeOfDates('America/Santiago', ['2026-09-06']).untilMs).toBe(Date.parse('2026-09-07T03:00:00Z'));
    // The Azores repeat midnight on 25 October: the 24th ends at the first one.
    expect(rangeOfDates('Atlantic/Azores', ['2026-10-24']).untilMs).toBe(Date.parse('2026-10-25T00:00:00Z'));
  });

  it('reads a missing or malformed stored value as never pulled', () => {
    for (const stored of [
      {},
      null,
      'x',
      { eventTypesPulledAt: null, slotStarts: [{ until: 'soon', pulledAt: null }] },
    ]) {
      expect(readPullCoverage(stored)).toEqual(NEVER_PULLED);
    }
  });
});
