import { describe, expect, it } from '@jest/globals';
import { mergeSlots, renderFeed, slotUid } from '../../src/feeds/render-feed.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import { at, CONNECTION_ID, eventsOf, renderInput, slot } from './feed-fixtures.js';

const span = (s: { eventId: string; startsAt: Date; endsAt: Date }) =>
  `${s.eventId} ${s.startsAt.toISOString().slice(11, 16)}–${s.endsAt.toISOString().slice(11, 16)}`;

describe('mergeSlots', () => {
  it('joins adjacent and overlapping slots of one event type, and keeps gaps apart', () => {
    const blocks = mergeSlots([
      slot('ev-intro', '2026-03-02T10:30:00Z'), // adjacent to 10:00
      slot('ev-intro', '2026-03-02T10:00:00Z'),
      slot('ev-intro', '2026-03-02T10:45:00Z'), // overlaps 10:30–11:00
      slot('ev-intro', '2026-03-02T12:00:00Z'), // after a gap
    ]);
    expect(blocks.map(span)).toEqual(['ev-intro 10:00–11:15', 'ev-intro 12:00–12:30']);
  });

  it('never joins slots of different event types', () => {
    const blocks = mergeSlots([
      slot('ev-intro', '2026-03-02T10:00:00Z'),
      slot('ev-cafe', '2026-03-02T10:30:00Z', 60),
      slot('ev-cafe', '2026-03-02T10:15:00Z', 30),
    ]);
    expect(blocks.map(span)).toEqual(['ev-intro 10:00–10:30', 'ev-cafe 10:15–11:30']);
  });

  it('keeps a contained slot inside its block without shortening it', () => {
    const blocks = mergeSlots([
      slot('ev-cafe', '2026-03-02T10:00:00Z', 120),
      slot('ev-cafe', '2026-03-02T10:30:00Z', 30),
    ]);
    expect(blocks.map(span)).toEqual(['ev-cafe 10:00–12:00']);
  });

  it('gives a block the first slot start, the highest sequence and the latest stamps of its members', () => {
    const [block] = mergeSlots([
      slot('ev-intro', '2026-03-02T10:00:00Z', 30, {
        sequence: 1,
        firstSeenAt: at('2026-02-20T00:00:00Z'),
        lastChangedAt: at('2026-02-25T00:00:00Z'),
      }),
      slot('ev-intro', '2026-03-02T10:30:00Z', 30, {
        sequence: 0,
        firstSeenAt: at('2026-03-01T12:00:00Z'),
        lastChangedAt: at('2026-03-01T12:00:00Z'),
      }),
    ]);
    expect(block).toEqual({
      eventId: 'ev-intro',
      startsAt: at('2026-03-02T10:00:00Z'),
      endsAt: at('2026-03-02T11:00:00Z'),
      sequence: 1,
      firstSeenAt: at('2026-03-01T12:00:00Z'),
      lastChangedAt: at('2026-03-01T12:00:00Z'),
    });
  });

  it('does not change its input', () => {
    const input = [slot('ev-intro', '2026-03-02T10:00:00Z'), slot('ev-intro', '2026-03-02T10:30:00Z')];
    const copy = structuredClone(input);
    mergeSlots(input);
    expect(input).toEqual(copy);
  });
});

describe('renderFeed with merge', () => {
  it('renders blocks with the UID of their first slot, and a grown block gets a new DTSTAMP', () => {
    const first = slot('ev-intro', '2026-03-02T10:00:00Z');
    const before = renderFeed(renderInput({ merge: true, slots: [first] }));
    const grown = renderFeed(
      renderInput({
        merge: true,
        slots: [
          first,
          slot('ev-intro', '2026-03-02T10:30:00Z', 30, {
            firstSeenAt: at('2026-03-02T08:30:00Z'),
            lastChangedAt: at('2026-03-02T08:30:00Z'),
          }),
        ],
      }),
    );
    assertStrictIcs(grown);
    const [a] = eventsOf(before);
    const [b, ...rest] = eventsOf(grown);
    expect(rest).toEqual([]);
    expect(b?.get('UID')).toBe(slotUid(CONNECTION_ID, 'ev-intro', first.startsAt));
    expect(b?.get('UID')).toBe(a?.get('UID'));
    expect(b?.get('DTEND')).toBe('20260302T110000Z');
    expect(a?.get('DTSTAMP')).toBe('20260301T090000Z');
    expect(b?.get('DTSTAMP')).toBe('20260302T083000Z');
    expect(b?.get('LAST-MODIFIED')).toBe('20260302T083000Z');
  });

  it('merges the default fixture into one intro block, one café block and the next day', () => {
    const ics = renderFeed(renderInput({ merge: true }));
    assertStrictIcs(ics);
    expect(eventsOf(ics).map((e) => `${e.get('DTSTART')}–${e.get('DTEND')}`)).toEqual([
      expect.stringMatching(/^20260302T100000Z–20260302T110000Z$/),
      expect.stringMatching(/^20260302T100000Z–20260302T110000Z$/),
      '20260303T080000Z–20260303T083000Z',
    ]);
    expect(new Set(eventsOf(ics).map((e) => e.get('SUMMARY'))).size).toBe(2);
  });
});
