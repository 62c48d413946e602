// The feed_views migration on a database that already holds feeds and event types: default feeds turn into
// free-time feeds under the same URL, every other feed keeps showing slots, and secret event types are
// recognised from the payloads already stored.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { hashFeedToken, newFeedToken } from '../../src/feeds/feed-token.js';
import { applyPendingMigrations } from '../../src/store/migrations/index.js';
import { createFeedStore } from '../../src/store/feeds.js';
import { createTestDatabase, MIGRATIONS_DIR, type TestDatabase } from '../support/db.js';
import { copyMigrations, type MigrationsCopy } from './helpers/migration-fixtures.js';

const FEED_VIEWS = '20261122000000_feed_views';
let db: TestDatabase | undefined;
let copy: MigrationsCopy | undefined;

afterAll(async () => {
  await db?.drop();
  await copy?.cleanup();
});

describe('the feed_views migration', () => {
  it('converts default feeds to free time under the same URL and keeps the others on slots', async () => {
    db = await createTestDatabase('feed_views_migration', { migrate: false });
    copy = await copyMigrations();
    await copy.remove(FEED_VIEWS);
    await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: copy.dir });

    const connectionId = randomUUID();
    await db.sql.query(`INSERT INTO connection (id, upstream_user_id) VALUES ($1, 'u-1')`, [connectionId]);
    await db.sql.query(
      `INSERT INTO event_type (connection_id, upstream_event_id, title, duration_minutes, enabled, content_hash, payload)
       VALUES ($1, 'ev-open', 'Intro', 30, true, 'a', '{"is_secret": false}'),
              ($1, 'ev-secret', 'Private', 45, true, 'b', '{"is_secret": true}'),
              ($1, 'ev-plain', 'Plain', 15, true, 'c', '{}')`,
      [connectionId],
    );
    const tokens = new Map<string, string>();
    const feeds: [string, string | null, object][] = [
      ['default', null, {}],
      ['default, merge off', null, { merge: false }],
      ['merged', null, { merge: true }],
      ['two weeks', null, { days: 14 }],
      ['one event type', 'ev-open', {}],
    ];
    // Made a second apart, in this order: the default feed is the oldest, and two made within one millisecond
    // (created_at keeps milliseconds) would be told apart by their random ids alone.
    for (const [index, [label, eventId, options]] of feeds.entries()) {
      const token = newFeedToken();
      tokens.set(label, token);
      await db.sql.query(
        `INSERT INTO feed (id, connection_id, upstream_event_id, label, token_hash, options, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          randomUUID(),
          connectionId,
          eventId,
          label,
          hashFeedToken(token),
          JSON.stringify(options),
          new Date(Date.UTC(2026, 0, 1) + index * 1000),
        ],
      );
    }

    await copy.write(
      FEED_VIEWS,
      await readFile(path.join(MIGRATIONS_DIR, FEED_VIEWS, 'migration.sql'), 'utf8'),
    );
    expect((await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: copy.dir })).applied).toEqual([
      FEED_VIEWS,
    ]);

    const store = createFeedStore(db.prisma);
    const optionsOf = async (label: string) => (await store.findByToken(tokens.get(label)!))?.options;
    expect(await optionsOf('default')).toEqual({ view: 'free' });
    expect(await optionsOf('default, merge off')).toEqual({ view: 'free' });
    expect(await optionsOf('merged')).toEqual({ view: 'slots', merge: true });
    expect(await optionsOf('two weeks')).toEqual({ view: 'slots', days: 14 });
    expect(await optionsOf('one event type')).toEqual({ view: 'slots' });
    // The default feed is still the connection's default: a reconnect finds it rather than making another.
    const ensured = await store.ensureDefaultFeed(connectionId);
    expect(ensured.token).toBeNull();
    expect(ensured.feed.label).toBe('default');

    const { rows } = await db.sql.query<{ upstream_event_id: string; secret: boolean }>(
      `SELECT upstream_event_id, secret FROM event_type ORDER BY upstream_event_id`,
    );
    expect(rows).toEqual([
      { upstream_event_id: 'ev-open', secret: false },
      { upstream_event_id: 'ev-plain', secret: false },
      { upstream_event_id: 'ev-secret', secret: true },
    ]);
  });
});
