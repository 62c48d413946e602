// slotfeed's `prisma migrate deploy`: what it creates and records on an empty database, that reruns are no-ops,
// and that concurrent runs serialise on Prisma's advisory lock.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { applyPendingMigrations, migrationStatus } from '../../src/store/migrations/index.js';
import { createTestDatabase, MIGRATIONS_DIR, type TestDatabase } from '../support/db.js';
import { copyMigrations, type MigrationsCopy } from './helpers/migration-fixtures.js';
import {
  REAL_MIGRATIONS,
  T0,
  historyRows,
  migrationErrorOf,
  recordingLogger,
  tableExists,
} from './helpers/runner-fixtures.js';

// Prisma's own DDL for the history table and its lock key, copied from prisma-engines
// (schema-engine/connectors/sql-schema-connector/src/flavour/postgres.rs) to check the runner against.
const PRISMA_MIGRATIONS_DDL = `CREATE TABLE prisma_reference._prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`;
const PRISMA_LOCK_KEY = 72707369;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const databases: TestDatabase[] = [];
const copies: MigrationsCopy[] = [];

async function emptyDatabase(label: string): Promise<TestDatabase> {
  const db = await createTestDatabase(label, { migrate: false });
  databases.push(db);
  return db;
}

afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
  await Promise.all(copies.map((copy) => copy.cleanup()));
});

async function columnsOf(sql: pg.Pool, schema: string, table: string) {
  const result = await sql.query(
    `SELECT column_name, data_type, character_maximum_length, is_nullable, column_default
     FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
    [schema, table],
  );
  const pk = await sql.query(
    `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
     WHERE i.indisprimary AND i.indrelid = format('%I.%I', $1::text, $2::text)::regclass`,
    [schema, table],
  );
  return { columns: result.rows, primaryKey: pk.rows.map((r: { attname: string }) => r.attname) };
}

describe('on an empty database', () => {
  let db: TestDatabase;
  let first: Awaited<ReturnType<typeof applyPendingMigrations>>;

  beforeAll(async () => {
    db = await emptyDatabase('runner_apply');
    first = await applyPendingMigrations({
      databaseUrl: db.url,
      migrationsDir: MIGRATIONS_DIR,
      now: () => T0,
    });
  });

  it('applies every migration, in order', () => {
    expect(REAL_MIGRATIONS.length).toBeGreaterThan(0);
    expect(first).toEqual({ applied: REAL_MIGRATIONS, alreadyApplied: [] });
  });

  it("creates _prisma_migrations exactly as Prisma's DDL does", async () => {
    await db.sql.query('CREATE SCHEMA prisma_reference');
    await db.sql.query(PRISMA_MIGRATIONS_DDL);
    const ours = await columnsOf(db.sql, 'public', '_prisma_migrations');
    const prismas = await columnsOf(db.sql, 'prisma_reference', '_prisma_migrations');
    expect(ours).toEqual(prismas);
    expect(ours.primaryKey).toEqual(['id']);
  });

  it('records one finished row per migration, with the checksum of the file', async () => {
    const rows = await historyRows(db.sql);
    expect(rows.map((r) => r.migration_name)).toEqual(REAL_MIGRATIONS);
    for (const row of rows) {
      const file = readFileSync(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row).toEqual({
        id: expect.stringMatching(UUID_V4),
        checksum: createHash('sha256').update(file).digest('hex'),
        finished_at: T0,
        migration_name: row.migration_name,
        logs: null,
        rolled_back_at: null,
        started_at: T0,
        applied_steps_count: 1,
      });
    }
  });

  it('applies nothing on a second run and leaves the history as it was', async () => {
    const before = await historyRows(db.sql);
    const second = await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: MIGRATIONS_DIR });
    expect(second).toEqual({ applied: [], alreadyApplied: REAL_MIGRATIONS });
    expect(await historyRows(db.sql)).toEqual(before);
  });

  it('reports the status without changing anything', async () => {
    expect(await migrationStatus({ databaseUrl: db.url, migrationsDir: MIGRATIONS_DIR })).toEqual({
      applied: REAL_MIGRATIONS,
      pending: [],
      modified: [],
      failed: [],
      missingLocally: [],
    });
  });

  it('releases the migration lock when it is done', async () => {
    // pg_locks is cluster-wide: other test files' databases may hold the same key at the same moment.
    const locks = await db.sql.query(
      `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [PRISMA_LOCK_KEY],
    );
    expect(locks.rowCount).toBe(0);
  });
});

describe('two processes at once', () => {
  it('apply each migration exactly once, without an error', async () => {
    const db = await emptyDatabase('runner_race');
    const copy = await copyMigrations();
    copies.push(copy);
    // A slow extra migration (named to sort after every real one) widens the window in which an unlocked second run would collide with the first.
    await copy.write(
      '99990101000000_slow',
      'SELECT pg_sleep(0.3);\nCREATE TABLE "slow_marker" ("x" INTEGER);\n',
    );
    const all = [...REAL_MIGRATIONS, '99990101000000_slow'];

    const options = { databaseUrl: db.url, migrationsDir: copy.dir };
    const [a, b] = await Promise.all([applyPendingMigrations(options), applyPendingMigrations(options)]);

    expect([...a.applied, ...b.applied].sort()).toEqual(all);
    expect([a.applied.length, b.applied.length].sort()).toEqual([0, all.length]);
    expect((await historyRows(db.sql)).map((r) => r.migration_name).sort()).toEqual(all);
  });
});

describe('while another session holds the migration lock', () => {
  let holder: pg.Client | undefined;
  afterEach(async () => {
    await holder?.end();
    holder = undefined;
  });

  it('waits a bounded time, then refuses naming the holder, and has touched nothing', async () => {
    const db = await emptyDatabase('runner_lock');
    holder = new pg.Client({ connectionString: db.url, application_name: 'lock-holder-under-test' });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [PRISMA_LOCK_KEY]);
    const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;

    const logger = recordingLogger();
    const error = await migrationErrorOf(
      applyPendingMigrations({
        databaseUrl: db.url,
        migrationsDir: MIGRATIONS_DIR,
        lockTimeoutMs: 300,
        logger,
      }),
    );
    expect(error.code).toBe('lock_timeout');
    expect(error.message).toContain(`pid ${holderPid}`);
    expect(error.message).toContain('lock-holder-under-test');
    expect(logger.lines.join('\n')).toContain('waiting');
    expect(await tableExists(db.sql, '_prisma_migrations')).toBe(false);

    await holder.query('SELECT pg_advisory_unlock($1)', [PRISMA_LOCK_KEY]);
    const result = await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: MIGRATIONS_DIR });
    expect(result.applied).toEqual(REAL_MIGRATIONS);
  });
});
