// Busy time from inferred bookings: the union of the bookings (overlapping or touching ones joined), less any
// time that is free again now. A booking is inferred when its slots close; if it is cancelled and the slots
// reopen, the booking row stays in the history, but the time is free, and a feed must not say both.
import type { FeedBooking } from './feed-model.js';

export interface Interval {
  startsAt: Date;
  endsAt: Date;
}

export interface BusyBlock extends Interval {
  /** When the latest booking in the block was first seen: the block's revision time. */
  changedAt: Date;
}

const ms = (d: Date) => d.getTime();

/** Joins overlapping or touching intervals, in start order; empty or inverted ones are dropped. */
export function unionOf<T extends Interval>(items: readonly T[], join: (a: T, b: T) => T): T[] {
  const sorted = items
    .filter((i) => ms(i.endsAt) > ms(i.startsAt))
    .sort((a, b) => ms(a.startsAt) - ms(b.startsAt));
  const out: T[] = [];
  for (const item of sorted) {
    const last = out.at(-1);
    if (last !== undefined && ms(item.startsAt) <= ms(last.endsAt)) out[out.length - 1] = join(last, item);
    else out.push(item);
  }
  return out;
}

const later = (a: Date, b: Date) => (ms(b) > ms(a) ? b : a);

export function busyBlocks(bookings: readonly FeedBooking[], free: readonly Interval[]): BusyBlock[] {
  const busy = unionOf(
    bookings.map((b) => ({ startsAt: b.startsAt, endsAt: b.endsAt, changedAt: b.detectedAt })),
    (a, b) => ({
      startsAt: a.startsAt,
      endsAt: later(a.endsAt, b.endsAt),
      changedAt: later(a.changedAt, b.changedAt),
    }),
  );
  const freeNow = unionOf([...free], (a, b) => ({ startsAt: a.startsAt, endsAt: later(a.endsAt, b.endsAt) }));
  const out: BusyBlock[] = [];
  for (const block of busy) {
    let from = ms(block.startsAt);
    const to = ms(block.endsAt);
    for (const gap of freeNow) {
      if (ms(gap.endsAt) <= from || ms(gap.startsAt) >= to) continue;
      if (ms(gap.startsAt) > from)
        out.push({ startsAt: new Date(from), endsAt: gap.startsAt, changedAt: block.changedAt });
      from = Math.max(from, ms(gap.endsAt));
    }
    if (to > from) out.push({ startsAt: new Date(from), endsAt: new Date(to), changedAt: block.changedAt });
  }
  return out;
}
