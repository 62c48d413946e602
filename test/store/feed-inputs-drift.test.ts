// What a feed's bytes depend on is declared once (src/feeds/feed-inputs.ts). These tests fail when the
// places that must agree with that declaration drift from it: the triggers Postgres runs (read back from its
// catalog), the render cache key, and what the calendar's name and description read. They also hold the
// claim in docs/feeds.md that every writer moves the feed version: SQL typed by hand included.
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeFeed, feedCalendarName } from '../../src/feeds/describe-feed.js';
import { feedOptionsSchema, type FeedOptions } from '../../src/feeds/feed-options.js';
import { hashFeedToken } from '../../src/feeds/feed-token.js';
import {
  FEED_CONNECTION_INPUTS,
  FEED_CONNECTION_INPUT_NAMES,
  FEED_ROW_INPUT_NAMES,
  type FeedConnectionState,
} from '../../src/feeds/feed-inputs.js';
import {
  feedCacheKey,
  feedLastModified,
  teamFeedCacheKey,
  teamFeedLastModified,
} from '../../src/serving/feed-validators.js';
import { createFeedStore } from '../../src/store/feeds.js';
import { commitSuccessfulSync } from '../../src/store/snapshots.js';
import { createTeamStore } from '../../src/store/teams.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { loadDatamodel } from './helpers/load-dmmf.js';

const SCHEMA_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/schema.prisma');
/** The declared columns that record a change rather than being one. */
const VERSION_FIELDS = ['feedVersion', 'feedChangedAt'];

let db: TestDatabase;
let columnOf: Map<string, string>;
let feedColumnOf: Map<string, string>;

beforeAll(async () => {
  db = await createTestDatabase('feed_inputs_drift');
  const models = (await loadDatamodel(SCHEMA_PATH)).models;
  const columnsOfModel = (name: string) =>
    new Map(
      models.find((m) => m.name === name)!.fields.map((field) => [field.name, field.dbName ?? field.name]),
    );
  columnOf = columnsOfModel('Connection');
  feedColumnOf = columnsOfModel('Feed');
});
afterAll(async () => {
  await db?.drop();
});

async function triggerColumns(name: string, table = 'connection'): Promise<string[]> {
  const { rows } = await db.sql.query<{ def: string }>(
    `SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = $2::regclass AND tgname = $1`,
    [name, table],
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

  it('is what moves a feed’s inputsChangedAt: every declared column of the feed row', async () => {
    expect(await triggerColumns('feed_shown_columns_move_inputs_changed_at', 'feed')).toEqual(
      FEED_ROW_INPUT_NAMES.map((field) => feedColumnOf.get(field)!).sort(),
    );
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
    const feed = { id: randomUUID(), upstreamEventId: null, options: {}, inputsChangedAt: null };
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

describe('every change of what a feed shows moves its Last-Modified and its cache key', () => {
  /** A window that started long before anything here was written: Last-Modified is the inputs' alone. */
  const WINDOW_START = new Date('2026-03-02T00:00:00Z');

  /** A feed's validators as the web role computes them, from what its token resolves to. */
  async function validatorsOf(token: string): Promise<{ lastModified: Date; key: string }> {
    const resolved = (await createFeedStore(db.prisma).resolveTokenHash(hashFeedToken(token)))!;
    if (resolved.kind === 'connection') {
      return {
        lastModified: feedLastModified(resolved.feed, resolved.connection, WINDOW_START),
        key: feedCacheKey(resolved.feed, resolved.connection, '2026-03-02', 28),
      };
    }
    return {
      lastModified: teamFeedLastModified(resolved.feed, resolved.team, WINDOW_START),
      key: teamFeedCacheKey(resolved.feed, resolved.team, '2026-03-02', 28),
    };
  }

  /**
   * One change of each option a feed may have, from options it is created with to options it is changed to.
   * Typed by the options' own type, and checked against the schema below: an option added without a case here
   * fails this file.
   */
  const OPTION_CHANGES: Record<keyof FeedOptions, { team: boolean; from: FeedOptions; to: FeedOptions }> = {
    view: { team: false, from: { view: 'free' }, to: { view: 'busy' } },
    days: { team: false, from: { days: 7 }, to: { days: 14 } },
    merge: { team: false, from: { view: 'slots', merge: false }, to: { view: 'slots', merge: true } },
    summary: { team: false, from: { summary: 'Free' }, to: { summary: 'Open' } },
    mode: { team: true, from: { mode: 'all' }, to: { mode: 'any' } },
    minimum: { team: true, from: { mode: 'all', minimum: 30 }, to: { mode: 'all', minimum: 60 } },
  };

  it('has a case for every option the schema knows', () => {
    expect(Object.keys(OPTION_CHANGES).sort()).toEqual(Object.keys(feedOptionsSchema.shape).sort());
  });

  async function feedWith(owner: { team: boolean }, options: FeedOptions) {
    const feeds = createFeedStore(db.prisma);
    const connection = await db.prisma.connection.create({
      data: { upstreamUserId: `options-${randomUUID()}`, timezone: 'UTC' },
    });
    if (!owner.team) return feeds.create({ connectionId: connection.id, options });
    const teams = createTeamStore(db.prisma);
    const team = await teams.create(`Team ${randomUUID()}`);
    await teams.addMembers(team.id, [connection.id]);
    return feeds.createTeamFeed({ teamId: team.id, options });
  }

  for (const [option, change] of Object.entries(OPTION_CHANGES)) {
    it(`${option}, changed through the feed store, with the writer's clock`, async () => {
      const { feed, token } = await feedWith(change, change.from);
      const before = await validatorsOf(token);
      const now = new Date(before.lastModified.getTime() + 60_000);
      await createFeedStore(db.prisma).updateOptions(feed.id, change.to, now);
      const after = await validatorsOf(token);
      expect(after.lastModified).toEqual(now);
      expect(after.key).not.toBe(before.key);
    });

    it(`${option}, changed by any other writer (SQL typed by hand)`, async () => {
      const { feed, token } = await feedWith(change, change.from);
      const before = await validatorsOf(token);
      await db.sql.query(`UPDATE feed SET options = options || $2::jsonb WHERE id = $1`, [
        feed.id,
        JSON.stringify(change.to),
      ]);
      const after = await validatorsOf(token);
      expect(after.lastModified.getTime()).toBeGreaterThan(before.lastModified.getTime());
      expect(after.key).not.toBe(before.key);
    });
  }

  it('the event type a feed shows, changed by any writer', async () => {
    const { feed, token } = await feedWith({ team: false }, {});
    const before = await validatorsOf(token);
    await db.sql.query(`UPDATE feed SET upstream_event_id = 'ev-other' WHERE id = $1`, [feed.id]);
    const after = await validatorsOf(token);
    expect(after.lastModified.getTime()).toBeGreaterThan(before.lastModified.getTime());
    expect(after.key).not.toBe(before.key);
  });

  it('a label, which no feed shows, moves neither', async () => {
    const { feed, token } = await feedWith({ team: false }, {});
    const before = await validatorsOf(token);
    await db.sql.query(`UPDATE feed SET label = 'Renamed by hand' WHERE id = $1`, [feed.id]);
    expect(await validatorsOf(token)).toEqual(before);
  });
});
