// The slot change set of one sync, computed from plain data: the fetched slots replace the stored open ones.
// Over the dates a sync pulled, an open slot that was not fetched is gone (snapshots.ts keeps closes to those
// dates when a sync pulled only some bands): booked, blocked,
// expired, or its event type was disabled or deleted.

export interface FetchedSlot {
  eventId: string;
  startsAt: Date;
  endsAt: Date;
}

export interface StoredOpenSlot extends FetchedSlot {
  id: bigint;
  sequence: number;
}

export interface SlotChangeSet {
  toOpen: FetchedSlot[];
  toClose: bigint[];
  /** Still bookable at the same start, but its end moved (the event type's duration changed). */
  toReschedule: { id: bigint; endsAt: Date; sequence: number }[];
}

const keyOf = (slot: FetchedSlot) => `${slot.eventId}\u0000${slot.startsAt.getTime()}`;

export function diffSlots(stored: readonly StoredOpenSlot[], fetched: readonly FetchedSlot[]): SlotChangeSet {
  const storedByKey = new Map(stored.map((slot) => [keyOf(slot), slot]));
  const fetchedKeys = new Set<string>();
  const toOpen: FetchedSlot[] = [];
  const toReschedule: SlotChangeSet['toReschedule'] = [];

  for (const slot of fetched) {
    const key = keyOf(slot);
    if (fetchedKeys.has(key)) continue;
    fetchedKeys.add(key);
    const existing = storedByKey.get(key);
    if (!existing) toOpen.push(slot);
    else if (existing.endsAt.getTime() !== slot.endsAt.getTime()) {
      toReschedule.push({ id: existing.id, endsAt: slot.endsAt, sequence: existing.sequence + 1 });
    }
  }
  const toClose = stored.filter((slot) => !fetchedKeys.has(keyOf(slot))).map((slot) => slot.id);
  return { toOpen, toClose, toReschedule };
}

export function isEmptyChangeSet(changes: SlotChangeSet): boolean {
  return changes.toOpen.length === 0 && changes.toClose.length === 0 && changes.toReschedule.length === 0;
}
