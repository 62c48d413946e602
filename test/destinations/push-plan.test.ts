// The push's decisions, without I/O: a feed's .ics cut into event resources (each the feed's own VEVENT with the
// marker), and which of them a push creates, replaces or deletes, and what a reconciliation repairs.
import { describe, expect, it } from '@jest/globals';
import { FEED_MARKER_PROPERTY, readEventIdentity } from '../../src/caldav/event-marker.js';
import { eventObjects, type EventObject } from '../../src/destinations/event-objects.js';
import { planPush, planReconcile, type ListedEvent } from '../../src/destinations/push-plan.js';
import { renderFeed } from '../../src/feeds/render-feed.js';
import type { WrittenEvent } from '../../src/store/caldav-destinations.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import { CAFE, eventsOf, renderInput, slot } from '../feeds/feed-fixtures.js';

const FEED_ID = '0b7e0f5c-6a3e-4b53-9d0e-3c1f3b2a9e11';
const WRITTEN_AT = new Date('2026-03-02T09:00:00Z');

describe('eventObjects: the feed’s .ics as one resource per event', () => {
  const ics = renderFeed(renderInput({ view: 'free' }));
  const objects = eventObjects(ics, FEED_ID);

  it('holds each VEVENT of the feed as rendered, in the feed’s order, with the marker naming the feed', () => {
    const feedEvents = eventsOf(ics);
    expect(objects.length).toBe(feedEvents.length);
    expect(objects.length).toBeGreaterThan(1);
    objects.forEach((object, i) => {
      const [written] = eventsOf(object.icalendar);
      const { [FEED_MARKER_PROPERTY]: marker, ...rest } = Object.fromEntries(written!);
      expect(marker).toBe(FEED_ID);
      expect(rest).toEqual(Object.fromEntries(feedEvents[i]!));
      expect(object.uid).toBe(feedEvents[i]!.get('UID'));
      expect(readEventIdentity(object.icalendar)).toEqual({ uid: object.uid, feedId: FEED_ID });
    });
  });

  it('is a valid calendar object of one VEVENT, with the feed’s VERSION and PRODID and none of its name', () => {
    for (const object of objects) {
      assertStrictIcs(object.icalendar);
      expect(object.icalendar.match(/^BEGIN:VEVENT\r$/gm)).toHaveLength(1);
      expect(object.icalendar).toMatch(/^PRODID:-\/\/slotfeed\/\/slotfeed\/\/EN\r$/m);
      expect(object.icalendar).not.toMatch(/X-WR-CALNAME|REFRESH-INTERVAL/);
    }
  });

  it('folds long lines again (a long description of many event types)', () => {
    const long = renderFeed(renderInput({ view: 'slots', eventTypes: new Map([['ev-cafe', CAFE]]) }));
    for (const object of eventObjects(long, FEED_ID)) {
      for (const line of object.icalendar.split('\r\n'))
        expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    }
  });

  it('has a digest that moves with the event and with nothing else', () => {
    const moved = renderFeed(
      renderInput({
        view: 'free',
        slots: [
          slot('ev-intro', '2026-03-02T10:00:00Z', 30),
          slot('ev-intro', '2026-03-02T10:30:00Z', 60),
          slot('ev-cafe', '2026-03-02T10:00:00Z', 60),
          slot('ev-intro', '2026-03-03T08:00:00Z'),
        ],
      }),
    );
    const after = eventObjects(moved, FEED_ID);
    expect(after[0]!.uid).toBe(objects[0]!.uid);
    expect(after[0]!.digest).not.toBe(objects[0]!.digest);
    expect(after[1]).toEqual(objects[1]);
    expect(eventObjects(ics, FEED_ID)).toEqual(objects);
  });

  it('refuses text that is no rendered feed', () => {
    expect(() =>
      eventObjects('BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:x\r\nEND:VEVENT\r\n', FEED_ID),
    ).toThrow(/without a UID/);
    expect(() => eventObjects('BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\n', FEED_ID)).toThrow(
      /inside a VEVENT/,
    );
  });
});

const event = (uid: string, digest = `d-${uid}`): EventObject => ({ uid, icalendar: `ICS ${uid}`, digest });
const record = (uid: string, digest = `d-${uid}`, etag: string | null = `e-${uid}`): WrittenEvent => ({
  uid,
  href: `/cal/${uid}.ics`,
  etag,
  digest,
  writtenAt: WRITTEN_AT,
});
const recorded = (...records: WrittenEvent[]) => new Map(records.map((r) => [r.uid, r]));
const listed = (uid: string, etag = `e-${uid}`): ListedEvent => ({ uid, href: `/cal/${uid}.ics`, etag });
const summary = (plan: ReturnType<typeof planPush>) =>
  plan.operations.map((op) =>
    op.kind === 'delete'
      ? `delete ${op.uid} if ${op.etag}`
      : `${op.kind} ${op.event.uid}${op.kind === 'update' ? ` if ${op.etag}` : ''}`,
  );

describe('planPush: the feed against the record of what was written', () => {
  it('writes everything to an empty destination, each only if nothing is there', () => {
    expect(summary(planPush([event('a'), event('b')], new Map()))).toEqual(['create a', 'create b']);
  });

  it('replaces a changed event under its recorded ETag, deletes one no longer shown, leaves unchanged ones', () => {
    const plan = planPush(
      [event('a'), event('b', 'new digest'), event('d')],
      recorded(record('a'), record('b'), record('c')),
    );
    expect(summary(plan)).toEqual(['delete c if e-c', 'update b if e-b', 'create d']);
    expect(plan.operations[1]).toMatchObject({ href: '/cal/b.ics' });
  });

  it('does nothing when the feed shows what was written', () => {
    expect(planPush([event('a')], recorded(record('a'))).operations).toEqual([]);
  });

  it('names no UID but the feed’s and the record’s', () => {
    const plan = planPush([event('a')], recorded(record('b')));
    expect(plan.operations.map((op) => (op.kind === 'delete' ? op.uid : op.event.uid)).sort()).toEqual([
      'a',
      'b',
    ]);
  });
});

describe('planReconcile: the feed against the record and the server’s listing of the feed’s events', () => {
  it('agrees with a push when the calendar holds what was written', () => {
    const written = recorded(record('a'), record('b'), record('c'));
    const desired = [event('a'), event('b', 'new digest'), event('d')];
    const plan = planReconcile(desired, written, [listed('a'), listed('b'), listed('c')]);
    expect(summary(plan)).toEqual(summary(planPush(desired, written)));
    expect(plan.repairs).toEqual([]);
  });

  it('creates again an event deleted in the calendar, and says so', () => {
    const plan = planReconcile([event('a')], recorded(record('a')), []);
    expect(summary(plan)).toEqual(['create a']);
    expect(plan.repairs).toEqual([expect.objectContaining({ kind: 'repair-created', uid: 'a' })]);
  });

  it('writes back an event edited in the calendar (its ETag moved), under the server’s ETag', () => {
    const plan = planReconcile([event('a')], recorded(record('a')), [listed('a', 'edited')]);
    expect(summary(plan)).toEqual(['update a if edited']);
    expect(plan.repairs).toEqual([expect.objectContaining({ kind: 'repair-restored', uid: 'a' })]);
  });

  it('deletes a stray of this feed the record does not know and the feed no longer shows', () => {
    const plan = planReconcile([event('a')], recorded(record('a')), [listed('a'), listed('stray', 'e-s')]);
    expect(summary(plan)).toEqual(['delete stray if e-s']);
    expect(plan.repairs).toEqual([expect.objectContaining({ kind: 'repair-deleted', uid: 'stray' })]);
  });

  it('adopts an event of the feed the server has but the record lost (a push whose answer never came)', () => {
    const plan = planReconcile([event('a')], new Map(), [listed('a', 'e-server')]);
    expect(summary(plan)).toEqual(['update a if e-server']);
  });

  it('forgets a record of an event gone from both the feed and the calendar', () => {
    const plan = planReconcile([], recorded(record('gone')), []);
    expect(plan.operations).toEqual([]);
    expect(plan.forget).toEqual(['gone']);
  });

  it('takes the server’s ETag for a record written without one, and changes nothing', () => {
    const plan = planReconcile([event('a')], recorded(record('a', 'd-a', null)), [listed('a', 'e-server')]);
    expect(plan.operations).toEqual([]);
    expect(plan.adopt).toEqual([listed('a', 'e-server')]);
    expect(plan.repairs).toEqual([]);
  });
});
