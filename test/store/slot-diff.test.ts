import { describe, expect, it } from '@jest/globals';
import { diffSlots, isEmptyChangeSet, type StoredOpenSlot } from '../../src/store/slot-diff.js';

const at = (iso: string) => new Date(iso);
const stored = (id: number, eventId: string, start: string, end: string): StoredOpenSlot => ({
  id: BigInt(id),
  eventId,
  startsAt: at(start),
  endsAt: at(end),
  sequence: 0,
});

describe('diffSlots', () => {
  const current = [
    stored(1, 'ev1', '2026-03-02T09:00:00Z', '2026-03-02T09:30:00Z'),
    stored(2, 'ev1', '2026-03-02T09:30:00Z', '2026-03-02T10:00:00Z'),
    stored(3, 'ev2', '2026-03-02T09:00:00Z', '2026-03-02T10:00:00Z'),
  ];

  it('finds nothing to do when the same slots come back', () => {
    const fetched = current.map(({ eventId, startsAt, endsAt }) => ({ eventId, startsAt, endsAt }));
    expect(isEmptyChangeSet(diffSlots(current, fetched))).toBe(true);
  });

  it('opens new slots, closes vanished ones and keys slots by event type and start', () => {
    const changes = diffSlots(current, [
      { eventId: 'ev1', startsAt: at('2026-03-02T09:00:00Z'), endsAt: at('2026-03-02T09:30:00Z') },
      { eventId: 'ev2', startsAt: at('2026-03-02T09:30:00Z'), endsAt: at('2026-03-02T10:30:00Z') },
    ]);
    expect(changes.toClose).toEqual([2n, 3n]);
    expect(changes.toOpen.map((s) => `${s.eventId} ${s.startsAt.toISOString()}`)).toEqual([
      'ev2 2026-03-02T09:30:00.000Z',
    ]);
    expect(changes.toReschedule).toEqual([]);
  });

  it('reschedules a slot whose end moved and raises its sequence', () => {
    const changes = diffSlots(current, [
      { eventId: 'ev1', startsAt: at('2026-03-02T09:00:00Z'), endsAt: at('2026-03-02T09:45:00Z') },
      { eventId: 'ev1', startsAt: at('2026-03-02T09:30:00Z'), endsAt: at('2026-03-02T10:00:00Z') },
      { eventId: 'ev2', startsAt: at('2026-03-02T09:00:00Z'), endsAt: at('2026-03-02T10:00:00Z') },
    ]);
    expect(changes.toReschedule).toEqual([{ id: 1n, endsAt: at('2026-03-02T09:45:00Z'), sequence: 1 }]);
    expect(changes.toOpen).toEqual([]);
    expect(changes.toClose).toEqual([]);
  });

  it('opens a duplicated fetched slot once', () => {
    const slot = { eventId: 'ev9', startsAt: at('2026-03-03T09:00:00Z'), endsAt: at('2026-03-03T09:15:00Z') };
    expect(diffSlots([], [slot, { ...slot }]).toOpen).toHaveLength(1);
  });
});
