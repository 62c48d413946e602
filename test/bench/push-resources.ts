// What a push spends on its feed's event resources for a change of one event (issue 43), by the feed's size: the
// whole feed rendered and cut into resources, as every push did (renderCalendar, the representation's bytes and
// tag, eventObjects), against the resources kept from the last version with the changed event rendered alone
// (destinations/feed-event-objects.ts's resourcesOf). The publication is built in memory: its plan and its
// revisions' statement are the same either way and are not timed. Each round moves one event's end; both ways must
// give the same resources, to the byte.
import { createHmac } from 'node:crypto';
import { eventObjects } from '../../src/destinations/event-objects.js';
import { resourcesOf } from '../../src/destinations/feed-event-objects.js';
import type { FeedEvent } from '../../src/feeds/feed-model.js';
import { renderCalendar } from '../../src/feeds/render-feed.js';
import type { FeedPublication } from '../../src/serving/feed-representation.js';
import { representationOf } from '../../src/serving/render-cache.js';
import { check, type BenchSection } from './bench-result.js';

const FEED_ID = '5b0e7f3c-2a41-4d8e-9c6a-1f2e3d4c5b6a';
const proofs = {
  sign: (feedId: string, uid: string) =>
    createHmac('sha256', 'bench').update(`${feedId}/${uid}`).digest('base64url'),
};
const history = { sequence: 0, changedAt: new Date('2026-11-30T08:00:00Z') };

/** A feed of `count` free blocks, two hours apart, each with the parts a real one has (a link, a colour). */
function feedOf(count: number): FeedEvent[] {
  const base = Date.parse('2026-12-02T09:00:00Z');
  return Array.from({ length: count }, (_, i) => ({
    uid: `free-${i}@slotfeed.bench`,
    startsAt: new Date(base + i * 2 * 3_600_000),
    endsAt: new Date(base + i * 2 * 3_600_000 + 3_600_000),
    summary: 'Free: intro call',
    url: 'https://book.example/ada/intro',
    color: 'dodgerblue',
    description: 'Book a slot in this block: intro call (30 min).',
    history,
  }));
}

const publicationOf = (events: FeedEvent[]): FeedPublication => ({
  head: { calendarName: 'Ada Lovelace — free time', description: 'Free time.', refreshIntervalSeconds: 900 },
  planned: { events, total: events.length },
  revisions: new Map(),
  lastModified: new Date('2026-11-30T09:00:00Z'),
});

const cpuMicros = (usage: NodeJS.CpuUsage) => usage.user + usage.system;

export async function benchPushResources(options: {
  sizes: number[];
  changes: number;
}): Promise<BenchSection[]> {
  const figures: Record<string, number> = {};
  for (const size of options.sizes) {
    let events = feedOf(size);
    let kept = resourcesOf({ proofs, render: renderCalendar }, FEED_ID, publicationOf(events));
    let wholeMicros = 0;
    let keptMicros = 0;
    for (let change = 0; change < options.changes; change++) {
      // One event's end moves by a minute, as a booking next to it would move it.
      const moved = change % size;
      events = events.map((event, i) =>
        i === moved ? { ...event, endsAt: new Date(event.endsAt.getTime() - 60_000) } : event,
      );
      const publication = publicationOf(events);
      const wholeStarted = process.cpuUsage();
      const text = renderCalendar(publication.head, publication.planned, publication.revisions);
      const body = representationOf(text, publication.lastModified, { gzip: false }).body;
      const whole = eventObjects(body.toString('utf8'), FEED_ID, proofs);
      wholeMicros += cpuMicros(process.cpuUsage(wholeStarted));
      const keptStarted = process.cpuUsage();
      kept = resourcesOf({ proofs, render: renderCalendar }, FEED_ID, publication, kept);
      keptMicros += cpuMicros(process.cpuUsage(keptStarted));
      check(
        kept.objects.length === whole.length &&
          kept.objects.every((object, i) => object.icalendar === whole[i]!.icalendar),
        `feed of ${size}: the kept resources differ from the whole feed's cut`,
      );
    }
    figures[`wholeFeedMicrosPerChange_${size}`] = Math.round(wholeMicros / options.changes);
    figures[`keptMicrosPerChange_${size}`] = Math.round(keptMicros / options.changes);
  }
  return [
    {
      benchmark: "A push's event resources for a change of one event",
      inputs: {
        eventsPerFeed: options.sizes.join(', '),
        changesPerSize: options.changes,
        event: 'a free block with a summary, a booking link, a colour and a description',
        timed: 'CPU of the resources alone (the plan and the revisions statement are the same either way)',
      },
      figures,
    },
  ];
}
