// `merge`: adjacent or overlapping slots of one event type shown as one block of free time. Slots of different
// event types are never joined: each has its own booking page, and a block must link to one.
import type { FeedSlot } from './feed-model.js';

const latest = (a: Date, b: Date) => (b.getTime() > a.getTime() ? b : a);

/**
 * Blocks of touching or overlapping slots per event type, ordered by start then event type. A block keeps its
 * first slot's event id and start (so its UID is that slot's), takes the highest SEQUENCE, and the latest
 * firstSeenAt / lastChangedAt of its members, so a block that grows gets a new DTSTAMP and LAST-MODIFIED.
 */
export function mergeSlots(slots: readonly FeedSlot[]): FeedSlot[] {
  const ordered = [...slots].sort(
    (a, b) =>
      compareText(a.eventId, b.eventId) ||
      a.startsAt.getTime() - b.startsAt.getTime() ||
      a.endsAt.getTime() - b.endsAt.getTime(),
  );
  const blocks: FeedSlot[] = [];
  let open: FeedSlot | undefined;
  for (const slot of ordered) {
    if (open && open.eventId === slot.eventId && slot.startsAt.getTime() <= open.endsAt.getTime()) {
      open.endsAt = latest(open.endsAt, slot.endsAt);
      open.sequence = Math.max(open.sequence, slot.sequence);
      open.firstSeenAt = latest(open.firstSeenAt, slot.firstSeenAt);
      open.lastChangedAt = latest(open.lastChangedAt, slot.lastChangedAt);
      continue;
    }
    open = { ...slot };
    blocks.push(open);
  }
  return blocks.sort(
    (a, b) => a.startsAt.getTime() - b.startsAt.getTime() || compareText(a.eventId, b.eventId),
  );
}

/** Code-unit order: the same everywhere, unlike localeCompare. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
