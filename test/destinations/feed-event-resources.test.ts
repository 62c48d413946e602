// An event's CalDAV resource made on its own (feed-event-objects.ts's resourcesOf) is the same, to the byte, as that
// event cut from the whole feed the .ics shows, for every part a VEVENT can hold (a colour, a booking link, a long
// description folded over several lines, busy time, a revision) and for a feed the cap cut; and a new version takes
// over the resources of the events whose data did not change, rendering only the others.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { eventObjects } from '../../src/destinations/event-objects.js';
import { resourcesOf } from '../../src/destinations/feed-event-objects.js';
import type { FeedEvent } from '../../src/feeds/feed-model.js';
import { renderCalendar } from '../../src/feeds/render-feed.js';
import type { FeedPublication } from '../../src/serving/feed-representation.js';

const FEED_ID = '3f1c2a9e-6d1b-4c55-9a77-0e8f4b2d1c10';
const proofs = {
  sign: (feedId: string, uid: string) =>
    createHmac('sha256', 'key').update(`${feedId}/${uid}`).digest('base64url'),
};
const at = (iso: string) => new Date(iso);
const history = { sequence: 0, changedAt: at('2026-11-30T08:00:00Z') };

const events: FeedEvent[] = [
  {
    uid: 'free-a@slotfeed',
    startsAt: at('2026-12-02T09:00:00Z'),
    endsAt: at('2026-12-02T10:30:00Z'),
    summary: 'Free: intro call, deep dive',
    url: 'https://book.example/ada?type=intro;deep,dive',
    color: 'dodgerblue',
    description: `Book a slot; ${'a long description that folds over more than one line of seventy-five octets, '.repeat(3)}end.`,
    history,
  },
  {
    uid: 'busy-b@slotfeed',
    startsAt: at('2026-12-02T11:00:00Z'),
    endsAt: at('2026-12-02T12:00:00Z'),
    summary: 'Busy',
    busy: true,
    history,
  },
  {
    uid: 'free-c@slotfeed',
    startsAt: at('2026-12-03T09:00:00Z'),
    endsAt: at('2026-12-03T09:30:00Z'),
    summary: 'Free — Ünïcødé',
    history,
  },
];

const publication = (shown: FeedEvent[], total = shown.length): FeedPublication => ({
  head: {
    calendarName: 'Ada Lovelace — free time',
    description: 'Free time; booked from it.',
    refreshIntervalSeconds: 900,
  },
  planned: { events: shown, total },
  revisions: new Map([['busy-b@slotfeed', { sequence: 3, changedAt: at('2026-11-30T09:15:00Z') }]]),
  lastModified: at('2026-11-30T09:15:00Z'),
});

/** The feed route's text of a publication, cut: what the .ics shows of each event. */
const wholeFeedCut = (p: FeedPublication) =>
  eventObjects(renderCalendar(p.head, p.planned, p.revisions), FEED_ID, proofs);

function countingRender() {
  const rendered: string[][] = [];
  const render: typeof renderCalendar = (head, planned, revisions) => {
    rendered.push(planned.events.map((event) => event.uid));
    return renderCalendar(head, planned, revisions);
  };
  return { rendered, render };
}

describe('an event resource made on its own', () => {
  it('is the whole feed’s cut of that event, to the byte, for every part of a VEVENT', () => {
    const p = publication(events);
    const { render } = countingRender();
    const made = resourcesOf({ proofs, render }, FEED_ID, p);
    expect(made.objects).toEqual(wholeFeedCut(p));
    // Each on its own too: rendered in a calendar of one, as a push of one change renders it.
    for (const event of events) {
      const alone = resourcesOf({ proofs, render }, FEED_ID, publication([event])).objects;
      expect(alone).toEqual(wholeFeedCut(p).filter((object) => object.uid === event.uid));
    }
  });

  it('is the same for a feed the cap cut', () => {
    const p = publication(events.slice(0, 2), 40);
    expect(resourcesOf({ proofs, render: renderCalendar }, FEED_ID, p).objects).toEqual(wholeFeedCut(p));
  });

  it('is taken over by the next version when its event did not change; a changed one is rendered again', () => {
    const first = resourcesOf({ proofs, render: renderCalendar }, FEED_ID, publication(events));
    const moved: FeedEvent = { ...events[2]!, endsAt: at('2026-12-03T10:00:00Z') };
    const next = publication([events[0]!, events[1]!, moved]);
    const { rendered, render } = countingRender();
    const made = resourcesOf({ proofs, render }, FEED_ID, next, first);
    expect(rendered).toEqual([['free-c@slotfeed']]);
    expect(made.objects).toEqual(wholeFeedCut(next));
    expect(made.objects[0]).toBe(first.objects[0]);
    // A new revision alone is a change too: it is in the event's text.
    const revised = {
      ...next,
      revisions: new Map([['busy-b@slotfeed', { sequence: 4, changedAt: at('2026-11-30T10:00:00Z') }]]),
    };
    const again = countingRender();
    expect(resourcesOf({ proofs, render: again.render }, FEED_ID, revised, made).objects).toEqual(
      wholeFeedCut(revised),
    );
    expect(again.rendered).toEqual([['busy-b@slotfeed']]);
  });
});
