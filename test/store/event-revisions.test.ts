// SEQUENCE, DTSTAMP and LAST-MODIFIED as a feed publishes them: carried on from history the first time, kept
// while an event is unchanged, moved when anything a subscriber sees of it changes, never lowered, and never
// overwritten by a render of older content.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FeedEvent } from '../../src/feeds/feed-model.js';
import { createEventRevisions, type EventRevisions } from '../../src/serving/event-revisions.js';
import { createEventRevisionStore } from '../../src/store/event-revisions.js';
import { createFeedStore } from '../../src/store/feeds.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let store: EventRevisions;
const at = (iso: string) => new Date(iso);
const WINDOW_START = at('2026-03-02T00:00:00Z');

function event(uid: string, extra: Partial<FeedEvent> = {}): FeedEvent {
  return {
    uid,
    startsAt: at('2026-03-02T10:00:00Z'),
    endsAt: at('2026-03-02T11:00:00Z'),
    summary: 'Free',
    description: 'Bookable in this time:\nIntro call (30 min)',
    history: { sequence: 2, changedAt: at('2026-03-01T08:00:00Z') },
    ...extra,
  };
}

async function newFeed(): Promise<string> {
  const connection = await db.prisma.connection.create({ data: { upstreamUserId: `rev-${randomUUID()}` } });
  return (await createFeedStore(db.prisma).create({ connectionId: connection.id })).feed.id;
}

beforeAll(async () => {
  db = await createTestDatabase('event_revisions');
  store = createEventRevisions(createEventRevisionStore(db.prisma));
});
afterAll(async () => {
  await db?.drop();
});

describe('event revisions', () => {
  it('start from history, stay while unchanged, and move with any change a subscriber sees', async () => {
    const feedId = await newFeed();
    const first = await store.revisionsFor(feedId, [event('a')], {
      contentChangedAt: at('2026-03-02T09:00:00Z'),
      windowStart: WINDOW_START,
    });
    expect(first.get('a')).toEqual({ sequence: 2, changedAt: at('2026-03-01T08:00:00Z') });

    const again = await store.revisionsFor(feedId, [event('a')], {
      contentChangedAt: at('2026-03-02T09:30:00Z'),
      windowStart: WINDOW_START,
    });
    expect(again.get('a')).toEqual(first.get('a'));

    let sequence = 2;
    let changedAt = at('2026-03-02T10:00:00Z');
    for (const change of [
      { endsAt: at('2026-03-02T10:30:00Z') },
      { endsAt: at('2026-03-02T10:30:00Z'), summary: 'Open' },
      { endsAt: at('2026-03-02T10:30:00Z'), summary: 'Open', url: 'https://book.test/x' },
      { endsAt: at('2026-03-02T10:30:00Z'), summary: 'Open', url: 'https://book.test/x', color: 'red' },
      // Back to the very first content: still a change for a subscriber, so it still moves forward.
      {},
    ]) {
      changedAt = new Date(changedAt.getTime() + 60_000);
      const revised = await store.revisionsFor(feedId, [event('a', change)], {
        contentChangedAt: changedAt,
        windowStart: WINDOW_START,
      });
      sequence += 1;
      expect(revised.get('a')).toEqual({ sequence, changedAt });
    }
  });

  it('move a changed event past both what was published and its slots’ history', async () => {
    const feedId = await newFeed();
    const windowStart = WINDOW_START;
    await store.revisionsFor(feedId, [event('h')], {
      contentChangedAt: at('2026-03-02T09:00:00Z'),
      windowStart,
    });
    const aheadInHistory = event('h', { summary: 'Open', history: { sequence: 9, changedAt: WINDOW_START } });
    const moved = await store.revisionsFor(feedId, [aheadInHistory], {
      contentChangedAt: at('2026-03-02T09:10:00Z'),
      windowStart,
    });
    expect(moved.get('h')).toEqual({ sequence: 9, changedAt: at('2026-03-02T09:10:00Z') });
  });

  it('refuse a render of older content: it gets the newer revision, which stays', async () => {
    const feedId = await newFeed();
    const times = { windowStart: WINDOW_START };
    await store.revisionsFor(feedId, [event('b')], {
      ...times,
      contentChangedAt: at('2026-03-02T09:00:00Z'),
    });
    const newer = await store.revisionsFor(feedId, [event('b', { summary: 'New' })], {
      ...times,
      contentChangedAt: at('2026-03-02T09:10:00Z'),
    });
    const stale = await store.revisionsFor(feedId, [event('b', { summary: 'Old' })], {
      ...times,
      contentChangedAt: at('2026-03-02T09:05:00Z'),
    });
    expect(stale.get('b')).toEqual(newer.get('b'));
    const { rows } = await db.sql.query<{ sequence: number }>(
      `SELECT sequence FROM feed_event WHERE feed_id = $1 AND uid = 'b'`,
      [feedId],
    );
    expect(rows).toEqual([{ sequence: newer.get('b')!.sequence }]);
  });

  it('agree across concurrent renders of the same content, as two replicas would', async () => {
    const feedId = await newFeed();
    const times = { windowStart: WINDOW_START, contentChangedAt: at('2026-03-02T09:00:00Z') };
    await store.revisionsFor(feedId, [event('c')], times);
    const changed = { ...times, contentChangedAt: at('2026-03-02T09:20:00Z') };
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        store.revisionsFor(feedId, [event('c', { summary: 'Moved' })], changed),
      ),
    );
    expect(new Set(results.map((r) => JSON.stringify(r.get('c')))).size).toBe(1);
    expect(results[0]!.get('c')).toEqual({ sequence: 3, changedAt: at('2026-03-02T09:20:00Z') });
  });

  it('forget events that ended before the window', async () => {
    const feedId = await newFeed();
    const yesterday = event('old', {
      startsAt: at('2026-03-01T10:00:00Z'),
      endsAt: at('2026-03-01T11:00:00Z'),
    });
    await store.revisionsFor(feedId, [yesterday], {
      contentChangedAt: at('2026-03-01T09:00:00Z'),
      windowStart: at('2026-03-01T00:00:00Z'),
    });
    await store.revisionsFor(feedId, [event('today')], {
      contentChangedAt: at('2026-03-02T09:00:00Z'),
      windowStart: WINDOW_START,
    });
    const { rows } = await db.sql.query<{ uid: string }>(`SELECT uid FROM feed_event WHERE feed_id = $1`, [
      feedId,
    ]);
    expect(rows.map((r) => r.uid)).toEqual(['today']);
  });
});
