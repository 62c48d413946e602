// The free view's block maths, as properties over random slot sets (fast-check), and the rendered events it
// gives: one per block, known by its start, with what can be booked inside listed.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { planFeedEvents } from '../../src/feeds/feed-events.js';
import type { FeedSlot } from '../../src/feeds/feed-model.js';
import { freeBlocks } from '../../src/feeds/free-blocks.js';
import { freeBlockUid, renderFeed } from '../../src/feeds/render-feed.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import { CAFE, CONNECTION_ID, INTRO, eventsOf, renderInput, slot } from './feed-fixtures.js';

const MINUTE = 60_000;
const BASE = Date.parse('2026-03-02T00:00:00Z');

/** Slots on a 5-minute grid over two days, of three event types, 5 to 120 minutes long (some zero-length). */
const slotArb = fc
  .record({
    eventId: fc.constantFrom('ev-a', 'ev-b', 'ev-c'),
    startStep: fc.integer({ min: 0, max: 576 }),
    lengthSteps: fc.integer({ min: 0, max: 24 }),
    sequence: fc.nat({ max: 5 }),
  })
  .map(({ eventId, startStep, lengthSteps, sequence }): FeedSlot => ({
    eventId,
    startsAt: new Date(BASE + startStep * 5 * MINUTE),
    endsAt: new Date(BASE + (startStep + lengthSteps) * 5 * MINUTE),
    sequence,
    firstSeenAt: new Date(BASE - MINUTE),
    lastChangedAt: new Date(BASE - MINUTE),
  }));
const slotsArb = fc.array(slotArb, { maxLength: 60 });

const covers = (from: number, to: number, slots: readonly FeedSlot[]) =>
  slots.some((s) => s.startsAt.getTime() <= from && to <= s.endsAt.getTime());

describe('freeBlocks: properties', () => {
  it('blocks never overlap or touch, and come in order', () => {
    fc.assert(
      fc.property(slotsArb, (slots) => {
        const blocks = freeBlocks(slots);
        for (let i = 1; i < blocks.length; i++) {
          expect(blocks[i]!.startsAt.getTime()).toBeGreaterThan(blocks[i - 1]!.endsAt.getTime());
        }
        for (const block of blocks) expect(block.endsAt.getTime()).toBeGreaterThan(block.startsAt.getTime());
      }),
    );
  });

  it('every slot with a length lies inside exactly one block, which lists its event type', () => {
    fc.assert(
      fc.property(slotsArb, (slots) => {
        const blocks = freeBlocks(slots);
        for (const slot of slots.filter((s) => s.endsAt > s.startsAt)) {
          const holding = blocks.filter((b) => b.startsAt <= slot.startsAt && slot.endsAt <= b.endsAt);
          expect(holding).toHaveLength(1);
          expect(holding[0]!.eventIds).toContain(slot.eventId);
        }
      }),
    );
  });

  it('no block covers time outside the union of the slots (checked minute by minute on the grid)', () => {
    fc.assert(
      fc.property(slotsArb, (slots) => {
        for (const block of freeBlocks(slots)) {
          for (let t = block.startsAt.getTime(); t < block.endsAt.getTime(); t += 5 * MINUTE) {
            expect(covers(t, t + 5 * MINUTE, slots)).toBe(true);
          }
        }
      }),
    );
  });

  it('adjacent slots merge: back-to-back slots of different event types make one block', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 30 }), fc.integer({ min: 1, max: 12 }), (count, steps) => {
        const slots = Array.from({ length: count }, (_, i) => ({
          eventId: i % 2 === 0 ? 'ev-a' : 'ev-b',
          startsAt: new Date(BASE + i * steps * 5 * MINUTE),
          endsAt: new Date(BASE + (i + 1) * steps * 5 * MINUTE),
          sequence: 0,
          firstSeenAt: new Date(BASE),
          lastChangedAt: new Date(BASE),
        }));
        const blocks = freeBlocks(slots);
        expect(blocks).toHaveLength(1);
        expect(blocks[0]!.endsAt).toEqual(slots.at(-1)!.endsAt);
      }),
    );
  });

  it('does not depend on the order of its input', () => {
    fc.assert(
      fc.property(slotsArb, (slots) => {
        expect(freeBlocks([...slots].reverse())).toEqual(freeBlocks(slots));
      }),
    );
  });
});

describe('the free view', () => {
  const input = (slots: FeedSlot[], overrides = {}) => renderInput({ view: 'free', slots, ...overrides });

  it('renders one strict VEVENT per block, "Free" by default, with what can be booked inside', () => {
    const ics = renderFeed(input(renderInput().slots as FeedSlot[]));
    assertStrictIcs(ics);
    const events = eventsOf(ics);
    // 10:00–10:30 and 10:30–11:00 intro, 10:00–11:00 café: one block; the next day's intro: another.
    expect(events.map((e) => `${e.get('DTSTART')}–${e.get('DTEND')}`)).toEqual([
      '20260302T100000Z–20260302T110000Z',
      '20260303T080000Z–20260303T083000Z',
    ]);
    expect(events.map((e) => e.get('SUMMARY'))).toEqual(['Free', 'Free']);
    const description = events[0]!
      .get('DESCRIPTION')!
      .replace(/\\n/g, '\n')
      .replace(/\\([,;])/g, '$1');
    expect(description).toBe(
      [
        'Bookable in this time:',
        `${CAFE.title} (1 h): ${CAFE.url}`,
        `Intro call (30 min): ${INTRO.url}`,
      ].join('\n'),
    );
    // Two booking links: no single URL for the block. One: the block links to it.
    expect(events[0]!.has('URL;VALUE=URI')).toBe(false);
    expect(events[1]!.get('URL;VALUE=URI')).toBe(INTRO.url);
    expect(events.every((e) => e.get('TRANSP') === 'TRANSPARENT' && !e.has('COLOR'))).toBe(true);
  });

  it('takes its summary from the feed', () => {
    const events = eventsOf(
      renderFeed(input([slot('ev-intro', '2026-03-02T10:00:00Z')], { summary: 'Open' })),
    );
    expect(events[0]!.get('SUMMARY')).toBe('Open');
  });

  it('knows a block by its start: a booking that splits it keeps the first part’s UID', () => {
    const day = Array.from({ length: 6 }, (_, i) =>
      slot('ev-intro', new Date(Date.parse('2026-03-02T09:00:00Z') + i * 30 * MINUTE).toISOString()),
    );
    const whole = planFeedEvents(input(day)).events;
    expect(whole).toHaveLength(1);
    expect(whole[0]!.uid).toBe(freeBlockUid(CONNECTION_ID, new Date('2026-03-02T09:00:00Z')));

    const split = planFeedEvents(input(day.filter((_, i) => i !== 2))).events;
    expect(split).toHaveLength(2);
    expect(split[0]!.uid).toBe(whole[0]!.uid);
    expect(split[0]!.endsAt).toEqual(new Date('2026-03-02T10:00:00Z'));
    expect(split[1]!.uid).toBe(freeBlockUid(CONNECTION_ID, new Date('2026-03-02T10:30:00Z')));
  });

  it('caps events, not slots: ten days of sixteen back-to-back slots under a cap of 20 are ten day-blocks', () => {
    const slots = Array.from({ length: 10 }, (_, day) =>
      Array.from({ length: 16 }, (_, i) =>
        slot(
          'ev-intro',
          new Date(Date.parse('2026-03-02T08:00:00Z') + day * 86_400_000 + i * 30 * MINUTE).toISOString(),
        ),
      ),
    ).flat();
    const planned = planFeedEvents(input(slots, { maxEvents: 20 }));
    expect(planned.total).toBe(10);
    expect(planned.events).toHaveLength(10);
    expect(planned.events.every((e) => e.endsAt.getTime() - e.startsAt.getTime() === 8 * 3600_000)).toBe(
      true,
    );

    const cut = renderFeed(input(slots, { maxEvents: 4 }));
    expect(eventsOf(cut)).toHaveLength(4);
    expect(cut.replace(/\r\n[ \t]/g, '')).toContain(
      'Showing the first 4 of 10 events\\, up to 2026-03-05 (UTC).',
    );
  });
});
