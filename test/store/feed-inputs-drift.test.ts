// What a feed's bytes depend on is declared once (src/feeds/serve/feed-inputs.ts). These tests fail when the
// places that must agree with that declaration drift from it: the triggers Postgres runs (read back from its
// catalog), the render cache key, and what the calendar's name and description read. They also hold the
// README's claim that every writer moves the feed version: SQL typed by hand included.
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeFeed, feedCalendarName } from '../../src/feeds/describe-feed.js';
import {
  FEED_CONNECTION_INPUTS,
  FEED_CONNECTION_INPUT_NAMES,
  feedCacheKey,
  type FeedConnectionState,
} from '../../src/feeds/serve/feed-inputs.js';
import { commitSuccessfulSync } from '../../src/store/snapshots.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { loadDatamodel } from './helpers/load-dmmf.js';

const SCHEMA_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/schema.prisma');
/** The declared columns that record a change rather than being one. */
const VERSION_FIELDS = ['feedVersion', 'feedChangedAt'];

let db: TestDatabase;
let columnOf: Map<string, string>;

beforeAll(async () => {
  db = await createTestDatabase('feed_inputs_drift');
  const model = (await loadDatamodel(SCHEMA_PATH)).models.find((m) => m.name === 'Connection')!;
  columnOf = new Map(model.fields.map((field) => [field.name, field.dbName ?? field.name]));
});
afterAll(async () => {
  await db?.drop();
});

async function triggerColumns(name: string): Promise<string[]> {
  const { rows } = await db.sql.query<{ def: string }>(
    `SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = 'connection'::regclass AND tgname = $1`,
    [name],
  );
  const match = /UPDATE OF (.+?) ON /.exec(rows[0]?.def ?? '');
  if (!match) throw new Error(`trigger ${name} watches no column list: ${rows[0]?.def}`);
  return match[1]!
    .split(',')
    .map((column) => column.trim().replace(/"/g, ''))
    .sort();
}

const columnsOf = (fields: string[]) => fields.map((field) => columnOf.get(field)!).sort();

describe('the declaration of a feed’s inputs', () => {
  it('is what the change-notice trigger watches: every declared column but the id', async () => {
    const declared = FEED_CONNECTION_INPUT_NAMES.filter((name) => name !== 'id');
    expect(await triggerColumns('connection_feed_change')).toEqual(columnsOf(declared));
  });

  it('is what moves the feed version when another writer changes a shown column', async () => {
    const shown = FEED_CONNECTION_INPUT_NAMES.filter(
      (name) => name !== 'id' && !VERSION_FIELDS.includes(name),
    );
    expect(await triggerColumns('connection_shown_columns_move_feed_version')).toEqual(columnsOf(shown));
  });

  it('is in the render cache key: a change to any declared column changes the key', () => {
    const state: FeedConnectionState = {
      id: randomUUID(),
      displayName: 'Ada',
      email: 'ada@example.test',
      timezone: 'Europe/Berlin',
      status: 'active',
      feedVersion: 3,
      feedChangedAt: new Date('2026-03-02T09:00:00Z'),
    };
    const feed = { id: randomUUID(), upstreamEventId: null, options: {} };
    const key = feedCacheKey(feed, state, '2026-03-02', 28);
    const changed: Record<keyof FeedConnectionState, unknown> = {
      id: randomUUID(),
      displayName: 'Ada L.',
      email: 'ada@other.test',
      timezone: 'Europe/London',
      status: 'disabled',
      feedVersion: 4,
      feedChangedAt: new Date('2026-03-02T09:01:00Z'),
    };
    for (const name of FEED_CONNECTION_INPUT_NAMES) {
      expect(feedCacheKey(feed, { ...state, [name]: changed[name] }, '2026-03-02', 28)).not.toBe(key);
    }
    expect(feedCacheKey(feed, state, '2026-03-03', 28)).not.toBe(key);
  });

  it('covers every connection column the calendar’s name and description read', async () => {
    const row = await db.prisma.connection.create({
      data: { upstreamUserId: `drift-${randomUUID()}`, displayName: 'Ada', status: 'needs_reauth' },
    });
    const read = new Set<string>();
    const watched = new Proxy(row, {
      get(target, property, receiver) {
        if (typeof property === 'string') read.add(property);
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    for (const view of ['free', 'slots'] as const) {
      describeFeed({ connection: watched, view, refreshIntervalSeconds: 900 });
    }
    feedCalendarName(watched);
    const connectionColumnsRead = [...read].filter((name) => columnOf.has(name));
    expect(connectionColumnsRead.length).toBeGreaterThan(0);
    expect(connectionColumnsRead.filter((name) => !(name in FEED_CONNECTION_INPUTS))).toEqual([]);
  });
});

describe('every writer moves the feed version', () => {
  async function newConnection() {
    return db.prisma.connection.create({
      data: { upstreamUserId: `writer-${randomUUID()}`, timezone: 'UTC' },
      select: { id: true },
    });
  }
  const versionOf = async (id: string) =>
    (await db.prisma.connection.findUniqueOrThrow({ where: { id }, select: { feedVersion: true } }))
      .feedVersion;

  it('SQL edits to slots and event types, statement by statement', async () => {
    const { id } = await newConnection();
    let version = await versionOf(id);
    const expectMoved = async () => {
      const now = await versionOf(id);
      expect(now).toBeGreaterThan(version);
      version = now;
    };
    await db.sql.query(
      `INSERT INTO event_type (connection_id, upstream_event_id, title, duration_minutes, enabled, content_hash, payload)
       VALUES ($1, 'ev', 'Intro', 30, true, 'h', '{}')`,
      [id],
    );
    await expectMoved();
    await db.sql.query(`UPDATE event_type SET title = 'Renamed' WHERE connection_id = $1`, [id]);
    await expectMoved();
    await db.sql.query(
      `INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at)
       VALUES ($1, 'ev', '2026-03-02T10:00Z', '2026-03-02T10:30Z')`,
      [id],
    );
    await expectMoved();
    await db.sql.query(`UPDATE slot SET gone_at = now() WHERE connection_id = $1`, [id]);
    await expectMoved();
    await db.sql.query(`DELETE FROM slot WHERE connection_id = $1`, [id]);
    await expectMoved();
    await db.sql.query(`UPDATE connection SET display_name = 'By hand' WHERE id = $1`, [id]);
    await expectMoved();
    // A column no feed shows moves nothing.
    await db.sql.query(`UPDATE connection SET last_sync_error = 'x', next_sync_at = now() WHERE id = $1`, [
      id,
    ]);
    expect(await versionOf(id)).toBe(version);
  });

  it('a sync commit moves it once, with its own clock, whatever it wrote', async () => {
    const { id } = await newConnection();
    const before = await versionOf(id);
    const now = new Date('2026-03-02T09:00:00Z');
    await commitSuccessfulSync(db.prisma, {
      connectionId: id,
      snapshot: {
        profile: { payload: { name: 'Ada' }, email: 'ada@example.test', name: 'Ada', timezone: 'UTC' },
        eventTypes: [
          {
            upstreamEventId: 'ev',
            title: 'Intro',
            durationMinutes: 30,
            enabled: true,
            secret: false,
            url: null,
            color: null,
            payload: { event_id: 'ev' },
          },
        ],
        overviews: [],
        slots: [
          {
            eventId: 'ev',
            startsAt: new Date('2026-03-02T10:00:00Z'),
            endsAt: new Date('2026-03-02T10:30:00Z'),
          },
        ],
      },
      run: { id: randomUUID(), jobId: null, attempt: 1, startedAt: now, callsByEndpoint: {} },
      now,
      next: now,
    });
    const after = await db.prisma.connection.findUniqueOrThrow({ where: { id } });
    expect(after.feedVersion).toBe(before + 1);
    expect(after.feedChangedAt).toEqual(now);
  });
});
