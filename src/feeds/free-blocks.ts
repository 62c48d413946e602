// The `free` view's maths: open slots of several event types, as intervals, merged into maximal blocks of free
// time. Slots that touch (one ends when the next starts) or overlap join; what a block offers is remembered
// per event type, so its description can say what can be booked inside it.
import type { FeedSlot } from './feed-model.js';
import { compareText } from './merge-slots.js';

export interface FreeBlock {
  startsAt: Date;
  endsAt: Date;
  /** Event type ids with a slot inside the block, each once, in the order first met. */
  eventIds: string[];
  /** The highest slot SEQUENCE inside: a block first published carries on from its slots' history. */
  sequence: number;
  /** The latest first-seen or changed time of a slot inside: the block's time before it was ever published. */
  lastChangedAt: Date;
}

const later = (a: Date, b: Date) => (b.getTime() > a.getTime() ? b : a);

/**
 * Maximal blocks covering exactly the union of the slots' intervals, ordered by start. Slots whose end is not
 * after their start cover no time and are left out (the renderer drops such events too).
 */
export function freeBlocks(slots: readonly FeedSlot[]): FreeBlock[] {
  const ordered = slots
    .filter((slot) => slot.endsAt.getTime() > slot.startsAt.getTime())
    .sort(
      (a, b) =>
        a.startsAt.getTime() - b.startsAt.getTime() ||
        a.endsAt.getTime() - b.endsAt.getTime() ||
        compareText(a.eventId, b.eventId),
    );
  const blocks: FreeBlock[] = [];
  let open: FreeBlock | undefined;
  for (const slot of ordered) {
    const touched = later(slot.firstSeenAt, slot.lastChangedAt);
    if (open && slot.startsAt.getTime() <= open.endsAt.getTime()) {
      open.endsAt = later(open.endsAt, slot.endsAt);
      if (!open.eventIds.includes(slot.eventId)) open.eventIds.push(slot.eventId);
      open.sequence = Math.max(open.sequence, slot.sequence);
      open.lastChangedAt = later(open.lastChangedAt, touched);
      continue;
    }
    open = {
      startsAt: slot.startsAt,
      endsAt: slot.endsAt,
      eventIds: [slot.eventId],
      sequence: slot.sequence,
      lastChangedAt: touched,
    };
    blocks.push(open);
  }
  return blocks;
}
