// Which revision each event of a render goes out with, decided without the database (the store then writes
// the plan under its own guard: test/store/event-revisions.test.ts).
import { describe, expect, it } from '@jest/globals';
import { feedEventDigest } from '../../src/feeds/feed-events.js';
import type { FeedEvent } from '../../src/feeds/feed-model.js';
import { planRevisions } from '../../src/serving/event-revisions.js';
import type { PublishedRevision } from '../../src/store/event-revisions.js';

const at = (iso: string) => new Date(iso);
const CONTENT_CHANGED_AT = at('2026-03-02T09:00:00Z');

function event(uid: string, extra: Partial<FeedEvent> = {}): FeedEvent {
  return {
    uid,
    startsAt: at('2026-03-02T10:00:00Z'),
    endsAt: at('2026-03-02T11:00:00Z'),
    summary: 'Free',
    history: { sequence: 2, changedAt: at('2026-03-01T08:00:00Z') },
    ...extra,
  };
}

const published = (e: FeedEvent, sequence: number, changedAt: Date): [string, PublishedRevision] => [
  e.uid,
  { digest: feedEventDigest(e), sequence, changedAt },
];

describe('planRevisions', () => {
  it('publishes an event new to the feed with its slots’ history, to be stored', () => {
    const plan = planRevisions([event('a')], new Map(), CONTENT_CHANGED_AT);
    expect(plan.kept.size).toBe(0);
    expect(plan.writes).toEqual([
      {
        uid: 'a',
        digest: feedEventDigest(event('a')),
        sequence: 2,
        changedAt: at('2026-03-01T08:00:00Z'),
        endsAt: at('2026-03-02T11:00:00Z'),
      },
    ]);
  });

  it('keeps what an unchanged event went out with, and stores nothing', () => {
    const before = published(event('a'), 5, at('2026-03-01T12:00:00Z'));
    const plan = planRevisions([event('a')], new Map([before]), CONTENT_CHANGED_AT);
    expect(plan.kept.get('a')).toEqual({ sequence: 5, changedAt: at('2026-03-01T12:00:00Z') });
    expect(plan.writes).toEqual([]);
  });

  it('moves a changed event past both what was published and its history, to the content’s change time', () => {
    const before = published(event('a'), 5, at('2026-03-01T12:00:00Z'));
    const moved = event('a', { summary: 'Open' });
    expect(planRevisions([moved], new Map([before]), CONTENT_CHANGED_AT).writes).toMatchObject([
      { uid: 'a', sequence: 6, changedAt: CONTENT_CHANGED_AT },
    ]);
    const aheadInHistory = event('a', {
      summary: 'Open',
      history: { sequence: 9, changedAt: CONTENT_CHANGED_AT },
    });
    expect(planRevisions([aheadInHistory], new Map([before]), CONTENT_CHANGED_AT).writes).toMatchObject([
      { uid: 'a', sequence: 9 },
    ]);
  });

  it('keeps the published revision when the render read content older than it', () => {
    const before = published(event('a'), 5, at('2026-03-02T09:30:00Z'));
    const plan = planRevisions([event('a', { summary: 'Old' })], new Map([before]), CONTENT_CHANGED_AT);
    expect(plan.kept.get('a')).toEqual({ sequence: 5, changedAt: at('2026-03-02T09:30:00Z') });
    expect(plan.writes).toEqual([]);
  });
});
