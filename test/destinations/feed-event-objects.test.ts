// A push's event resources (destinations/feed-event-objects.ts) are the feed's .ics as the feed route serves it, cut
// into one resource per event, to the byte; and a change of one event makes that event's resource alone (issue 43:
// every push rendered and cut the whole feed again, ~28 µs an event, 4–8 ms a push for a feed of 150–300 events).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { eventObjects } from '../../src/destinations/event-objects.js';
import { feedEventObjects, type FeedEventObjectsDeps } from '../../src/destinations/feed-event-objects.js';
import { renderCalendar } from '../../src/feeds/render-feed.js';
import { pushedFeedDeps } from '../../src/composition/services.js';
import { patient } from '../support/patience.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { bookNextSlotAndSync } from './helpers/feed-destination.js';

let h: WebHarness;

beforeAll(async () => {
  h = await createWebHarness('feed_event_objects');
}, patient(30_000));
afterAll(async () => {
  await h?.close();
});

it("a push's event resources are the served feed's events to the byte, and a one-event change makes that event alone", async () => {
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  await h.syncNow(connected.connectionId);
  const token = connected.token!;
  const feedId = (await h.feeds.findByToken(token))!.id;
  const { stores } = h.sync;
  // The events each render was given, one entry a render.
  const rendered: number[] = [];
  // The worker's own deps, the renderer counted.
  const deps: FeedEventObjectsDeps = {
    ...pushedFeedDeps(h.sync.config, stores, h.sync.clock),
    render: (head, planned, revisions) => {
      rendered.push(planned.events.length);
      return renderCalendar(head, planned, revisions);
    },
  };
  const asServed = async () => {
    const response = await h.get(`/feeds/${token}.ics`);
    expect(response.status).toBe(200);
    return eventObjects(response.text, feedId, stores.eventProofs);
  };

  const first = await feedEventObjects(deps, feedId);
  expect(first.length).toBeGreaterThan(2);
  expect(first).toEqual(await asServed());
  // Every event made, in one render.
  expect(rendered).toEqual([first.length]);

  rendered.length = 0;
  expect(await feedEventObjects(deps, feedId)).toEqual(first);
  expect(rendered).toEqual([]);

  // One slot booked upstream and synced: one block of the feed shrinks.
  await bookNextSlotAndSync(h, connected.connectionId);
  const second = await feedEventObjects(deps, feedId);
  expect(second).toEqual(await asServed());
  const before = new Set(first.map((object) => object.digest));
  const changed = second.filter((object) => !before.has(object.digest));
  expect(changed.length).toBeGreaterThan(0);
  expect(changed.length).toBeLessThan(second.length);
  // Only the changed events were rendered again; the others' resources were kept.
  expect(rendered).toEqual([changed.length]);
});
