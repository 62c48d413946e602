// Busy time from inferred bookings, as properties over random bookings and free time (minutes from an epoch).
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { busyBlocks } from '../../src/feeds/busy-blocks.js';

const T0 = Date.parse('2026-03-02T00:00:00Z');
const at = (minute: number) => new Date(T0 + minute * 60_000);
const span = fc.tuple(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 1, max: 120 }));
const bookings = fc.array(
  fc.tuple(span, fc.integer({ min: 0, max: 1000 })).map(([[s, len], detected]) => ({
    startsAt: at(s),
    endsAt: at(s + len),
    detectedAt: at(detected),
  })),
  { maxLength: 12 },
);
const free = fc.array(
  span.map(([s, len]) => ({ startsAt: at(s), endsAt: at(s + len) })),
  { maxLength: 8 },
);
const inAny = (minute: number, items: { startsAt: Date; endsAt: Date }[]) =>
  items.some(
    (i) => i.startsAt.getTime() <= at(minute).getTime() && at(minute).getTime() < i.endsAt.getTime(),
  );

describe('busyBlocks', () => {
  it('is exactly the booked minutes that are not free now, in sorted blocks that neither overlap nor touch', () => {
    fc.assert(
      fc.property(bookings, free, (booked, freeNow) => {
        const blocks = busyBlocks(booked, freeNow);
        for (let minute = 0; minute < 720; minute++) {
          expect(inAny(minute, blocks)).toBe(inAny(minute, booked) && !inAny(minute, freeNow));
        }
        for (let i = 1; i < blocks.length; i++) {
          expect(blocks[i]!.startsAt.getTime()).toBeGreaterThanOrEqual(blocks[i - 1]!.endsAt.getTime());
        }
        for (const block of blocks) expect(block.endsAt.getTime()).toBeGreaterThan(block.startsAt.getTime());
      }),
    );
  });

  it('joins touching bookings into one block revised when its latest booking was seen', () => {
    const blocks = busyBlocks(
      [
        { startsAt: at(0), endsAt: at(30), detectedAt: at(5) },
        { startsAt: at(30), endsAt: at(60), detectedAt: at(9) },
      ],
      [],
    );
    expect(blocks).toEqual([{ startsAt: at(0), endsAt: at(60), changedAt: at(9) }]);
  });

  it('leaves out a cancelled booking whose time is free again', () => {
    expect(
      busyBlocks(
        [{ startsAt: at(0), endsAt: at(30), detectedAt: at(1) }],
        [{ startsAt: at(0), endsAt: at(30) }],
      ),
    ).toEqual([]);
  });
});
