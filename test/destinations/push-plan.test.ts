// The push's decisions, without I/O: a feed's .ics cut into event resources (each the feed's own VEVENT with the
// marker), and which of them a push creates, replaces or deletes, and what a reconciliation repairs.
import { describe, expect, it } from '@jest/globals';
import {
  EVENT_PROOF_PROPERTY,
  FEED_MARKER_PROPERTY,
  readEventIdentity,
} from '../../src/caldav/event-marker.js';
import { eventObjects, type EventObject } from '../../src/destinations/event-objects.js';
import { planPush, planReconcile, type ListedEvent, type Listing } from '../../src/destinations/push-plan.js';
import { renderFeed } from '../../src/feeds/render-feed.js';
import type { WrittenEvent } from '../../src/store/caldav-destinations.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import { CAFE, eventsOf, renderInput, slot } from '../feeds/feed-fixtures.js';

const FEED_ID = '0b7e0f5c-6a3e-4b53-9d0e-3c1f3b2a9e11';
/** A stand-in for the vault's proof (event-proofs.ts has the keyed one): what matters here is where it goes. */
const PROOFS = { sign: (feedId: string, uid: string) => `proof-of-${uid}` };
const WRITTEN_AT = new Date('2026-03-02T09:00:00Z');

describe('eventObjects: the feed’s .ics as one resource per event', () => {
  const ics = renderFeed(renderInput({ view: 'free' }));
  const objects = eventObjects(ics, FEED_ID, PROOFS);

  it('holds each VEVENT of the feed as rendered, in the feed’s order, with the marker naming the feed and the proof binding it to its UID', () => {
    const feedEvents = eventsOf(ics);
    expect(objects.length).toBe(feedEvents.length);
    expect(objects.length).toBeGreaterThan(1);
    objects.forEach((object, i) => {
      const [written] = eventsOf(object.icalendar);
      const {
        [FEED_MARKER_PROPERTY]: marker,
        [EVENT_PROOF_PROPERTY]: proof,
        ...rest
      } = Object.fromEntries(written!);
      expect(marker).toBe(FEED_ID);
      expect(proof).toBe(`proof-of-${object.uid}`);
      expect(rest).toEqual(Object.fromEntries(feedEvents[i]!));
      expect(object.uid).toBe(feedEvents[i]!.get('UID'));
      expect(readEventIdentity(object.icalendar)).toEqual({
        uid: object.uid,
        feedId: FEED_ID,
        proof: `proof-of-${object.uid}`,
      });
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
    for (const object of eventObjects(long, FEED_ID, PROOFS)) {
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
    const after = eventObjects(moved, FEED_ID, PROOFS);
    expect(after[0]!.uid).toBe(objects[0]!.uid);
    expect(after[0]!.digest).not.toBe(objects[0]!.digest);
    expect(after[1]).toEqual(objects[1]);
    expect(eventObjects(ics, FEED_ID, PROOFS)).toEqual(objects);
  });

  it('refuses text that is no rendered feed', () => {
    expect(() =>
      eventObjects('BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:x\r\nEND:VEVENT\r\n', FEED_ID, PROOFS),
    ).toThrow(/without a UID/);
    expect(() => eventObjects('BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\n', FEED_ID, PROOFS)).toThrow(
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
  clash: false,
});
const clashed = (uid: string): WrittenEvent => ({ ...record(uid, '', null), href: '', clash: true });
const recorded = (...records: WrittenEvent[]) => new Map(records.map((r) => [r.uid, r]));
/** As listed under the feed's marker; `proven`: its proof fits its UID (slotfeed wrote it). */
const listed = (uid: string, etag = `e-${uid}`, proven = true): ListedEvent => ({
  uid,
  href: `/cal/${uid}.ics`,
  etag,
  proven,
});
const whole = (...events: ListedEvent[]): Listing => ({ events, complete: true });
const cutShort = (...events: ListedEvent[]): Listing => ({ events, complete: false });
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
    const plan = planReconcile(desired, written, whole(listed('a'), listed('b'), listed('c')));
    expect(summary(plan)).toEqual(summary(planPush(desired, written)));
    expect(plan.repairs).toEqual([]);
  });

  it('creates again an event deleted in the calendar, and says so', () => {
    const plan = planReconcile([event('a')], recorded(record('a')), whole());
    expect(summary(plan)).toEqual(['create a']);
    expect(plan.repairs).toEqual([expect.objectContaining({ kind: 'repair-created', uid: 'a' })]);
  });

  it('writes back an event edited in the calendar (its ETag moved), under the server’s ETag', () => {
    const plan = planReconcile([event('a')], recorded(record('a')), whole(listed('a', 'edited')));
    expect(summary(plan)).toEqual(['update a if edited']);
    expect(plan.repairs).toEqual([expect.objectContaining({ kind: 'repair-restored', uid: 'a' })]);
  });

  it('deletes a stray with slotfeed’s proof that the record does not know and the feed no longer shows', () => {
    const plan = planReconcile(
      [event('a')],
      recorded(record('a')),
      whole(listed('a'), listed('stray', 'e-s')),
    );
    expect(summary(plan)).toEqual(['delete stray if e-s']);
    expect(plan.repairs).toEqual([expect.objectContaining({ kind: 'repair-deleted', uid: 'stray' })]);
  });

  it('adopts an event of the feed the server has but the record lost (a push whose answer never came)', () => {
    const plan = planReconcile([event('a')], new Map(), whole(listed('a', 'e-server')));
    expect(summary(plan)).toEqual(['update a if e-server']);
  });

  it('forgets a record of an event gone from both the feed and the calendar', () => {
    const plan = planReconcile([], recorded(record('gone')), whole());
    expect(plan.operations).toEqual([]);
    expect(plan.forget).toEqual(['gone']);
  });

  it('takes the server’s ETag for a record written without one, and changes nothing', () => {
    const plan = planReconcile(
      [event('a')],
      recorded(record('a', 'd-a', null)),
      whole(listed('a', 'e-server')),
    );
    expect(plan.operations).toEqual([]);
    expect(plan.adopt).toEqual([{ uid: 'a', href: '/cal/a.ics', etag: 'e-server' }]);
    expect(plan.repairs).toEqual([]);
  });

  it('leaves alone an event with the feed’s marker whose proof does not fit its UID: a person’s copy of one of slotfeed’s events', () => {
    const copy = listed('copy-made-by-the-person', 'e-copy', false);
    const plan = planReconcile([event('a')], recorded(record('a')), whole(listed('a'), copy));
    expect(plan.operations).toEqual([]);
    expect(plan.leftAlone).toEqual([copy]);
    // Even when the feed is empty and everything of slotfeed's goes.
    const emptied = planReconcile([], recorded(record('a')), whole(listed('a'), copy));
    expect(summary(emptied)).toEqual(['delete a if e-a']);
    expect(emptied.leftAlone).toEqual([copy]);
  });

  it('a listing the server cut short forgets nothing and writes nothing again on the strength of an absence', () => {
    const written = recorded(record('a'), record('b'), record('gone'));
    const plan = planReconcile([event('a'), event('b', 'new')], written, cutShort());
    expect(summary(plan)).toEqual(['delete gone if e-gone', 'update b if e-b']);
    expect(plan.forget).toEqual([]);
    expect(plan.repairs).toEqual([]);
  });

  it('finds an event the server keeps under another UID at the href slotfeed wrote it to, and writes it back', () => {
    const rewritten = { ...listed('server-made-uid', 'e-x', false), href: '/cal/a.ics' };
    const plan = planReconcile([event('a')], recorded(record('a')), whole(rewritten));
    expect(summary(plan)).toEqual(['update a if e-x']);
    expect(plan.leftAlone).toEqual([]);
  });

  it('takes the href where the server keeps an event it moved', () => {
    const moved = { ...listed('a'), href: '/cal/elsewhere.ics' };
    const plan = planReconcile([event('a')], recorded(record('a')), whole(moved));
    expect(plan.operations).toEqual([]);
    expect(plan.adopt).toEqual([{ uid: 'a', href: '/cal/elsewhere.ics', etag: 'e-a' }]);
  });
});

describe('a UID the calendar holds as someone else’s event (a clash)', () => {
  it('a push neither writes nor deletes it, and forgets it once the feed no longer shows the UID', () => {
    expect(planPush([event('a')], recorded(clashed('a'))).operations).toEqual([]);
    const gone = planPush([], recorded(clashed('a')));
    expect(gone.operations).toEqual([]);
    expect(gone.forget).toEqual(['a']);
  });

  it('a reconciliation tries the create again (the person’s event may be gone), quietly', () => {
    const plan = planReconcile([event('a')], recorded(clashed('a')), whole());
    expect(plan.operations).toEqual([{ kind: 'create', event: event('a'), clashBefore: true }]);
    expect(plan.repairs).toEqual([]);
  });
});
