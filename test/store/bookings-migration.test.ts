// The pull_order_and_bookings migration on a database with history: every closed slot gets a reason from what
// history can tell, and the taken closes become bookings (one per interval that became unavailable, across
// event types), the same way a sync commit infers them.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { applyPendingMigrations } from '../../src/store/migrations/index.js';
import { closeReasonOf } from '../../src/store/close-reasons.js';
import { createTestDatabase, MIGRATIONS_DIR, type TestDatabase } from '../support/db.js';
import { copyMigrations, type MigrationsCopy } from './helpers/migration-fixtures.js';

const MIGRATION = '20261122010000_pull_order_and_bookings';
let db: TestDatabase | undefined;
let copy: MigrationsCopy | undefined;

afterAll(async () => {
  await db?.drop();
  await copy?.cleanup();
});

describe('the pull_order_and_bookings migration', () => {
  it('gives existing closes a reason and infers their bookings', async () => {
    db = await createTestDatabase('bookings_migration', { migrate: false });
    copy = await copyMigrations();
    await copy.removeFrom(MIGRATION);
    await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: copy.dir });

    const id = randomUUID();
    await db.sql.query(`INSERT INTO connection (id, upstream_user_id) VALUES ($1, 'u-1')`, [id]);
    // ev-a and ev-b enabled throughout; ev-c disabled by a version from 08:00; ev-d removed at 08:00.
    await db.sql.query(
      `INSERT INTO event_type (connection_id, upstream_event_id, title, duration_minutes, enabled, content_hash, payload, valid_from, valid_to)
       VALUES ($1, 'ev-a', 'A', 30, true, 'a', '{}', '2026-03-01T00:00Z', NULL),
              ($1, 'ev-b', 'B', 60, true, 'b', '{}', '2026-03-01T00:00Z', NULL),
              ($1, 'ev-c', 'C', 30, true, 'c1', '{}', '2026-03-01T00:00Z', '2026-03-02T08:00Z'),
              ($1, 'ev-c', 'C', 30, false, 'c2', '{}', '2026-03-02T08:00Z', NULL),
              ($1, 'ev-d', 'D', 30, true, 'd', '{}', '2026-03-01T00:00Z', '2026-03-02T08:00Z')`,
      [id],
    );
    const slot = (event: string, start: string, end: string, goneAt: string | null) =>
      db!.sql.query(
        `INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at, gone_at)
         VALUES ($1, $2, $3, $4, '2026-03-01T00:00Z', '2026-03-01T00:00Z', $5)`,
        [id, event, start, end, goneAt],
      );
    // One booking at 10:00–10:30 seen at 08:00: it took A 10:00 and B 09:30 and 10:00; A 09:30 and 10:30 stay.
    await slot('ev-a', '2026-03-03T09:30Z', '2026-03-03T10:00Z', null);
    await slot('ev-a', '2026-03-03T10:00Z', '2026-03-03T10:30Z', '2026-03-02T08:00Z');
    await slot('ev-a', '2026-03-03T10:30Z', '2026-03-03T11:00Z', null);
    await slot('ev-b', '2026-03-03T09:30Z', '2026-03-03T10:30Z', '2026-03-02T08:00Z');
    await slot('ev-b', '2026-03-03T10:00Z', '2026-03-03T11:00Z', '2026-03-02T08:00Z');
    // Closed for other reasons in the same sync.
    await slot('ev-c', '2026-03-03T12:00Z', '2026-03-03T12:30Z', '2026-03-02T08:00Z');
    await slot('ev-d', '2026-03-03T13:00Z', '2026-03-03T13:30Z', '2026-03-02T08:00Z');
    await slot('ev-a', '2026-03-02T07:00Z', '2026-03-02T07:30Z', '2026-03-02T08:00Z');

    await copy.write(
      MIGRATION,
      await readFile(path.join(MIGRATIONS_DIR, MIGRATION, 'migration.sql'), 'utf8'),
    );
    expect((await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: copy.dir })).applied).toEqual([
      MIGRATION,
    ]);

    const reasons = await db.sql.query<{
      upstream_event_id: string;
      starts_at: Date;
      close_reason: string | null;
    }>(`SELECT upstream_event_id, starts_at, close_reason FROM slot ORDER BY upstream_event_id, starts_at`);
    expect(
      reasons.rows.map(
        (r) => `${r.upstream_event_id} ${r.starts_at.toISOString().slice(11, 16)} ${r.close_reason}`,
      ),
    ).toEqual([
      'ev-a 07:00 passed',
      'ev-a 09:30 null',
      'ev-a 10:00 taken',
      'ev-a 10:30 null',
      'ev-b 09:30 taken',
      'ev-b 10:00 taken',
      'ev-c 12:00 event_type_disabled',
      'ev-d 13:00 event_type_removed',
    ]);
    const bookings = await db.sql.query<{
      starts_at: Date;
      ends_at: Date;
      event_ids: string[];
      slots_closed: number;
    }>(`SELECT starts_at, ends_at, event_ids, slots_closed FROM booking WHERE connection_id = $1`, [id]);
    expect(bookings.rows).toEqual([
      {
        starts_at: new Date('2026-03-03T10:00Z'),
        ends_at: new Date('2026-03-03T10:30Z'),
        event_ids: ['ev-a', 'ev-b'],
        slots_closed: 3,
      },
    ]);
  });
});

describe('closeReasonOf', () => {
  const now = new Date('2026-03-02T08:00:00Z');
  const eventTypes = new Map([
    ['on', { enabled: true }],
    ['off', { enabled: false }],
  ]);
  const horizon = { zone: 'Europe/Berlin', dates: new Set(['2026-03-02', '2026-03-03']) };
  const reason = (eventId: string, start: string, withHorizon = true) =>
    closeReasonOf(
      { eventId, startsAt: new Date(start) },
      { now, eventTypes, ...(withHorizon ? { horizon } : {}) },
    );

  it('tells taken from passed, disabled, removed and moved out of the window', () => {
    expect(reason('on', '2026-03-02T10:00:00Z')).toBe('taken');
    expect(reason('on', '2026-03-02T08:00:00Z')).toBe('passed');
    expect(reason('off', '2026-03-02T10:00:00Z')).toBe('event_type_disabled');
    expect(reason('gone', '2026-03-02T10:00:00Z')).toBe('event_type_removed');
    // 23:30Z on the 3rd is 00:30 on the 4th in Berlin: outside the dates pulled.
    expect(reason('on', '2026-03-03T23:30:00Z')).toBe('window_moved');
    expect(reason('on', '2026-03-03T22:30:00Z')).toBe('taken');
    expect(reason('on', '2026-03-03T23:30:00Z', false)).toBe('taken');
  });
});
