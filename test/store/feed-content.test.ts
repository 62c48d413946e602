import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeFeed, feedCalendarName } from '../../src/feeds/describe-feed.js';
import { renderFeed } from '../../src/feeds/render-feed.js';
import { readFeedContent, type FeedContent } from '../../src/serving/feed-content.js';
import { feedWindow } from '../../src/serving/feed-window.js';
import { createFeedContentStore } from '../../src/store/feed-content.js';
import { createFeedStore, type FeedRecord } from '../../src/store/feeds.js';
import { syncConnection } from '../../src/sync/sync-connection.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';

// 20:00Z is already 01:30 the next day in Asia/Kolkata (UTC+05:30): the window starts 2026-03-03 local,
// which is 2026-03-02T18:30Z.
const NOW = new Date('2026-03-02T20:00:00Z');
const SETTINGS = { now: NOW, defaultDays: 2 };
const at = (iso: string) => new Date(iso);

let db: TestDatabase;
const kolkata = randomUUID();
const other = randomUUID();

function feedOf(connectionId: string, extra: Partial<FeedRecord> = {}): FeedRecord {
  return {
    id: randomUUID(),
    connectionId,
    teamId: null,
    upstreamEventId: null,
    label: null,
    options: {},
    createdAt: NOW,
    inputsChangedAt: null,
    labelChangedAt: null,
    revokedAt: null,
    tokenRecoverable: false,
    ...extra,
  };
}

async function eventType(
  connectionId: string,
  upstreamEventId: string,
  title: string,
  extra: { enabled?: boolean; validTo?: Date } = {},
) {
  await db.prisma.eventType.create({
    data: {
      connectionId,
      upstreamEventId,
      title,
      durationMinutes: 30,
      enabled: extra.enabled ?? true,
      url: `https://book.calendbook.test/${upstreamEventId}`,
      color: '#33b679',
      contentHash: `${upstreamEventId}-${title}`,
      payload: {},
      validFrom: at('2026-02-01T00:00:00Z'),
      validTo: extra.validTo ?? null,
    },
  });
}

async function openSlot(connectionId: string, upstreamEventId: string, start: string, goneAt?: Date) {
  const startsAt = at(start);
  await db.prisma.slot.create({
    data: {
      connectionId,
      upstreamEventId,
      startsAt,
      endsAt: new Date(startsAt.getTime() + 30 * 60_000),
      sequence: 1,
      firstSeenAt: at('2026-03-01T08:00:00Z'),
      lastChangedAt: at('2026-03-01T09:00:00Z'),
      goneAt: goneAt ?? null,
    },
  });
}

/** "eventId start" of each slot, for compact comparisons. */
const keys = (slots: { eventId: string; startsAt: Date }[]) =>
  slots.map((s) => `${s.eventId} ${s.startsAt.toISOString()}`);

beforeAll(async () => {
  db = await createTestDatabase('feed_content');
  await db.prisma.connection.createMany({
    data: [
      {
        id: kolkata,
        upstreamUserId: 'user-kolkata',
        displayName: 'Asha Rao',
        email: 'asha@example.test',
        timezone: 'Asia/Kolkata',
        status: 'needs_reauth',
        feedVersion: 4,
        feedChangedAt: at('2026-03-02T19:00:00Z'),
        lastSyncOutcome: 'failed',
      },
      { id: other, upstreamUserId: 'user-other', timezone: null },
    ],
  });
  await eventType(kolkata, 'ev-a', 'Intro v1', { validTo: at('2026-03-01T00:00:00Z') });
  await eventType(kolkata, 'ev-a', 'Intro v2');
  await eventType(kolkata, 'ev-b', 'Deep dive');
  await eventType(kolkata, 'ev-c', 'Paused', { enabled: false });
  await eventType(other, 'ev-a', 'Someone else');

  await openSlot(kolkata, 'ev-a', '2026-03-02T18:00:00Z'); // 23:30 local on the 2nd: before the window
  await openSlot(kolkata, 'ev-a', '2026-03-02T18:30:00Z'); // the window's first instant
  await openSlot(kolkata, 'ev-b', '2026-03-03T09:00:00Z');
  await openSlot(kolkata, 'ev-a', '2026-03-03T09:00:00Z');
  await openSlot(kolkata, 'ev-a', '2026-03-03T10:00:00Z', at('2026-03-02T19:00:00Z')); // gone
  await openSlot(kolkata, 'ev-c', '2026-03-03T11:00:00Z'); // its event type is disabled
  await openSlot(kolkata, 'ev-b', '2026-03-04T18:00:00Z');
  await openSlot(kolkata, 'ev-b', '2026-03-04T18:30:00Z'); // the window's end: excluded
  await openSlot(other, 'ev-a', '2026-03-03T09:00:00Z');
  await openSlot(other, 'ev-a', '2026-03-02T00:00:00Z');
  // Inserting fixture rows moved the feed version (any writer does); state the one these tests expect.
  await db.sql.query(
    `UPDATE connection SET feed_version = 4, feed_changed_at = '2026-03-02T19:00:00Z' WHERE id = $1`,
    [kolkata],
  );
});
afterAll(async () => {
  await db?.drop();
});

/** Each connection's zone as a caller that resolved it would pass it (issue 43: the content in one statement). */
const zoneOf = (connectionId: string) => (connectionId === kolkata ? 'Asia/Kolkata' : null);

describe.each([
  ['read in a transaction (no zone known)', () => undefined],
  ['read in one statement (the zone known)', zoneOf],
  ['the zone moved since the caller read it: read again in a transaction', () => 'Pacific/Auckland'],
] as const)('readFeedContent, %s', (_how, expectedZoneOf) => {
  const settingsFor = (feed: FeedRecord) => {
    const expectedZone = expectedZoneOf(feed.connectionId ?? '');
    return expectedZone === undefined ? SETTINGS : { ...SETTINGS, expectedZone };
  };
  const read = (feed: FeedRecord) =>
    readFeedContent(createFeedContentStore(db.prisma), feed, settingsFor(feed));

  it('reads the window from the start of today in the connection zone, open slots of enabled event types', async () => {
    const content = await read(feedOf(kolkata));
    expect(content.windowStart).toEqual(at('2026-03-02T18:30:00Z'));
    expect(content.windowEnd).toEqual(at('2026-03-04T18:30:00Z'));
    expect(content.windowKey).toBe('2026-03-03');
    expect(keys(content.slots)).toEqual([
      'ev-a 2026-03-02T18:30:00.000Z',
      'ev-a 2026-03-03T09:00:00.000Z',
      'ev-b 2026-03-03T09:00:00.000Z',
      'ev-b 2026-03-04T18:00:00.000Z',
    ]);
    expect(content.slots[0]).toEqual({
      eventId: 'ev-a',
      startsAt: at('2026-03-02T18:30:00Z'),
      endsAt: at('2026-03-02T19:00:00Z'),
      sequence: 1,
      firstSeenAt: at('2026-03-01T08:00:00Z'),
      lastChangedAt: at('2026-03-01T09:00:00Z'),
    });
  });

  it('returns the current versions of the event types it may show, and the connection state feeds describe', async () => {
    const content = await read(feedOf(kolkata));
    expect([...content.eventTypes.entries()]).toEqual([
      [
        'ev-a',
        {
          title: 'Intro v2',
          durationMinutes: 30,
          url: 'https://book.calendbook.test/ev-a',
          color: '#33b679',
          enabled: true,
          secret: false,
        },
      ],
      ['ev-b', expect.objectContaining({ title: 'Deep dive' })],
    ]);
    expect(content.connection).toEqual({
      id: kolkata,
      displayName: 'Asha Rao',
      email: 'asha@example.test',
      timezone: 'Asia/Kolkata',
      status: 'needs_reauth',
      feedVersion: 4,
      feedChangedAt: at('2026-03-02T19:00:00Z'),
    });
  });

  it('limits a one-event feed to its event type', async () => {
    const content = await read(feedOf(kolkata, { upstreamEventId: 'ev-b' }));
    expect([...content.eventTypes.keys()]).toEqual(['ev-b']);
    expect(keys(content.slots)).toEqual(['ev-b 2026-03-03T09:00:00.000Z', 'ev-b 2026-03-04T18:00:00.000Z']);
  });

  it('shows no slots for a one-event feed whose event type is disabled', async () => {
    const content = await read(feedOf(kolkata, { upstreamEventId: 'ev-c' }));
    expect([...content.eventTypes.keys()]).toEqual([]);
    expect(content.slots).toEqual([]);
  });

  it('takes the day range from the feed options before the default', async () => {
    const content = await read(feedOf(kolkata, { options: { days: 1 } }));
    expect(content.windowEnd).toEqual(at('2026-03-03T18:30:00Z'));
    expect(keys(content.slots)).toEqual([
      'ev-a 2026-03-02T18:30:00.000Z',
      'ev-a 2026-03-03T09:00:00.000Z',
      'ev-b 2026-03-03T09:00:00.000Z',
    ]);
  });

  it('uses UTC days for a connection without a zone', async () => {
    const content = await read(feedOf(other));
    expect(content.windowStart).toEqual(at('2026-03-02T00:00:00Z'));
    expect(content.windowKey).toBe('2026-03-02');
    expect(keys(content.slots)).toEqual(['ev-a 2026-03-02T00:00:00.000Z', 'ev-a 2026-03-03T09:00:00.000Z']);
  });

  it('throws for a feed whose connection is gone', async () => {
    await expect(read(feedOf(randomUUID()))).rejects.toThrow(/no connection/);
  });
});

describe('feedWindow', () => {
  it('counts calendar days in the zone, so a window over a DST change is an hour shorter', () => {
    // Europe/Berlin springs forward on 2026-03-29.
    const window = feedWindow(at('2026-03-28T12:00:00Z'), 'Europe/Berlin', 2);
    expect(window).toEqual({
      windowStart: at('2026-03-27T23:00:00Z'),
      windowEnd: at('2026-03-29T22:00:00Z'),
      windowKey: '2026-03-28',
    });
  });

  it('falls back to UTC for an invalid zone', () => {
    expect(feedWindow(NOW, 'Not/AZone', 1).windowStart).toEqual(at('2026-03-02T00:00:00Z'));
  });
});

describe('a feed of a simulated account, from sync to text', () => {
  const clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));
  let h: SyncHarness;
  let connectionId: string;
  let feed: FeedRecord;

  const syncOnce = () => {
    clock.advance(1);
    return syncConnection(h.services.syncDeps, { connectionId, jobId: null, attempt: 1, maxAttempts: 1 });
  };
  const read = () =>
    readFeedContent(createFeedContentStore(h.clients.prisma), feed, { now: clock.now(), defaultDays: 28 });
  const render = (content: FeedContent, merge = false) =>
    renderFeed({
      connectionId,
      calendarName: feedCalendarName(content.connection),
      description: describeFeed({
        connection: content.connection,
        view: 'slots',
        refreshIntervalSeconds: h.config.sync.intervalSeconds,
      }),
      refreshIntervalSeconds: h.config.sync.intervalSeconds,
      eventTypes: content.eventTypes,
      slots: content.slots,
      view: 'slots',
      merge,
      maxEvents: 2000,
    });

  beforeAll(async () => {
    h = await createSyncHarness('feed_content_sim', { clock });
    connectionId = await h.connect(h.sim.users[0]!.email);
    await syncOnce();
    ({ feed } = await createFeedStore(h.clients.prisma).ensureDefaultFeed(connectionId));
  });
  afterAll(async () => {
    await h?.close();
  });

  it('renders a strict feed with one event per open slot, merged or not', async () => {
    const content = await read();
    expect(content.slots.length).toBeGreaterThan(20);
    const ics = render(content);
    assertStrictIcs(ics);
    expect(ics.match(/^BEGIN:VEVENT\r$/gm)).toHaveLength(content.slots.length);
    const merged = render(content, true);
    assertStrictIcs(merged);
    expect(merged.match(/^BEGIN:VEVENT\r$/gm)?.length ?? 0).toBeLessThanOrEqual(content.slots.length);
  });

  it('renders the same bytes after a sync that changed nothing, and new ones when the version moved', async () => {
    const before = await read();
    const first = render(before);
    await syncOnce();
    const after = await read();
    expect(after.connection.feedVersion).toBe(before.connection.feedVersion);
    expect(render(after)).toBe(first);

    const [taken] = after.slots;
    h.sim.control.book(taken!.eventId, taken!.startsAt.toISOString());
    await syncOnce();
    const booked = await read();
    expect(booked.connection.feedVersion).toBeGreaterThan(after.connection.feedVersion);
    expect(keys(booked.slots)).not.toContain(keys([taken!])[0]);
    assertStrictIcs(render(booked));
  });

  it('keeps serving the last good snapshot, saying so, when the account needs re-authorisation', async () => {
    const before = await read();
    await h.stores.connections.markNeedsReauth(connectionId, 'invalid_grant', clock.now());
    const after = await read();
    expect(after.connection.status).toBe('needs_reauth');
    expect(keys(after.slots)).toEqual(keys(before.slots));
    const ics = render(after);
    assertStrictIcs(ics);
    expect(ics.replace(/\r\n[ \t]/g, '')).toContain(
      'The account needs re-authorisation: reconnect it to keep',
    );
  });
});
