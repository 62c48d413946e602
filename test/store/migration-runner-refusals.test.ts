// When slotfeed's runner refuses to migrate, and what it leaves behind: edited or missing migrations, a
// migration that fails (rolled back whole, then blocking until resolved, as Prisma's P3009), a database with
// unknown history, scripts that would break the one-transaction-per-migration rule, and never a password.
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  applyPendingMigrations,
  markMigrationRolledBack,
  migrationStatus,
} from '../../src/store/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { copyMigrations, type MigrationsCopy } from './helpers/migration-fixtures.js';
import {
  REAL_MIGRATIONS,
  T0,
  historyRows,
  migrationErrorOf,
  recordingLogger,
  tableExists,
} from './helpers/runner-fixtures.js';

const INIT = REAL_MIGRATIONS[0] ?? 'no migrations';
const NEXT = '99990101000000_next';
const NEXT_SQL = 'CREATE TABLE "next_marker" ("x" INTEGER);\n';

const databases: TestDatabase[] = [];
const copies: MigrationsCopy[] = [];

async function setUp(label: string): Promise<{ db: TestDatabase; copy: MigrationsCopy }> {
  const db = await createTestDatabase(label, { migrate: false });
  const copy = await copyMigrations();
  databases.push(db);
  copies.push(copy);
  return { db, copy };
}

afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
  await Promise.all(copies.map((copy) => copy.cleanup()));
});

describe('an applied migration that was edited', () => {
  it('is refused by name, and nothing after it is applied', async () => {
    const { db, copy } = await setUp('refuse_edited');
    const options = { databaseUrl: db.url, migrationsDir: copy.dir };
    await applyPendingMigrations(options);
    const history = await historyRows(db.sql);

    await copy.write(INIT, (await copy.read(INIT)) + '\nALTER TABLE "slot" ADD COLUMN "sneaky" TEXT;\n');
    await copy.write(NEXT, NEXT_SQL);
    const error = await migrationErrorOf(applyPendingMigrations(options));

    expect(error.code).toBe('checksum_mismatch');
    expect(error.migrations).toEqual([INIT]);
    expect(error.message).toContain(INIT);
    expect(error.message).toContain('new migration');
    expect(await tableExists(db.sql, 'next_marker')).toBe(false);
    expect(await historyRows(db.sql)).toEqual(history);
    expect((await migrationStatus(options)).modified).toEqual([INIT]);
  });

  it('is not "edited" when only its line endings changed (a CRLF checkout)', async () => {
    const { db, copy } = await setUp('crlf_checkout');
    const options = { databaseUrl: db.url, migrationsDir: copy.dir };
    await applyPendingMigrations(options);

    const original = await copy.read(INIT);
    await copy.write(INIT, original.replaceAll('\n', '\r\n'));
    await copy.write(NEXT, NEXT_SQL);
    expect(await applyPendingMigrations(options)).toEqual({
      applied: [NEXT],
      alreadyApplied: REAL_MIGRATIONS,
    });
  });
});

it('refuses when the database has applied a migration this folder does not have', async () => {
  const { db, copy } = await setUp('refuse_missing');
  const options = { databaseUrl: db.url, migrationsDir: copy.dir };
  await copy.write(NEXT, NEXT_SQL);
  await applyPendingMigrations(options);

  await copy.remove(NEXT);
  const error = await migrationErrorOf(applyPendingMigrations(options));
  expect(error.code).toBe('missing_locally');
  expect(error.migrations).toEqual([NEXT]);
  expect(error.message).toContain(NEXT);
});

describe('a migration that fails', () => {
  // Decision: the failed attempt is recorded, as Prisma records it, even though our transaction already
  // undid the migration. An operator then sees it in `prisma migrate status`, and a fleet of restarting
  // processes stops at a clear error instead of each retrying a migration that cannot succeed. Resolving is
  // explicit: fix the file, mark the attempt rolled back, run again.
  const BROKEN = '99990101000000_broken';
  const BROKEN_SQL = [
    'CREATE TABLE "half_applied" ("id" INTEGER);',
    'INSERT INTO "half_applied" VALUES (1);',
    'SELECT * FROM "no_such_table";',
    '',
  ].join('\n');

  it('is rolled back whole, recorded as failed, blocks later runs, and applies once resolved', async () => {
    const { db, copy } = await setUp('refuse_failed');
    const options = { databaseUrl: db.url, migrationsDir: copy.dir, now: () => T0 };
    await copy.write(BROKEN, BROKEN_SQL);

    const failure = await migrationErrorOf(applyPendingMigrations(options));
    expect(failure.code).toBe('apply_failed');
    expect(failure.migrations).toEqual([BROKEN]);
    expect(failure.message).toContain(BROKEN);
    expect(failure.message).toContain('relation "no_such_table" does not exist (SQLSTATE 42P01)');
    expect(failure.message).toContain('line 3');

    // Nothing of the broken migration remains; the one before it, in its own transaction, stays applied.
    expect(await tableExists(db.sql, 'half_applied')).toBe(false);
    const rows = await historyRows(db.sql);
    const [init, broken] = [rows[0], rows[rows.length - 1]];
    expect(init).toMatchObject({ migration_name: INIT, applied_steps_count: 1, finished_at: T0 });
    expect(broken).toEqual({
      id: expect.any(String),
      checksum: createHash('sha256').update(BROKEN_SQL).digest('hex'),
      finished_at: null,
      migration_name: BROKEN,
      logs: expect.stringContaining('Database error code: 42P01'),
      rolled_back_at: null,
      started_at: T0,
      applied_steps_count: 0,
    });

    // Blocked as Prisma blocks (P3009), even once the file is fixed, until someone resolves the attempt.
    await copy.write(BROKEN, 'CREATE TABLE "half_applied" ("id" INTEGER);\n');
    const blocked = await migrationErrorOf(applyPendingMigrations(options));
    expect(blocked.code).toBe('failed_migration');
    expect(blocked.migrations).toEqual([BROKEN]);
    expect(blocked.message).toContain('P3009');
    expect(blocked.message).toContain('rolled_back_at');
    expect((await migrationStatus(options)).failed).toEqual([BROKEN]);

    await markMigrationRolledBack({ databaseUrl: db.url, now: () => T0 }, BROKEN);
    expect(await applyPendingMigrations(options)).toEqual({
      applied: [BROKEN],
      alreadyApplied: REAL_MIGRATIONS,
    });
    expect(await tableExists(db.sql, 'half_applied')).toBe(true);
    const attempts = (await historyRows(db.sql)).filter((row) => row.migration_name === BROKEN);
    expect(attempts.map((row) => [row.rolled_back_at, row.finished_at !== null])).toEqual(
      expect.arrayContaining([
        [T0, false],
        [null, true],
      ]),
    );

    const notFailed = await migrationErrorOf(markMigrationRolledBack({ databaseUrl: db.url }, BROKEN));
    expect(notFailed.code).toBe('not_failed');
  });

  it('never shows the database password, in logs or in errors', async () => {
    const { db, copy } = await setUp('redaction');
    await copy.write(BROKEN, BROKEN_SQL);
    const url = new URL(db.url);
    url.password = 's3cret-pass-word'; // trust auth on the test server ignores it
    const logger = recordingLogger();
    const options = { databaseUrl: url.toString(), migrationsDir: copy.dir, logger };

    const errors = [
      await migrationErrorOf(applyPendingMigrations(options)),
      await migrationErrorOf(applyPendingMigrations(options)),
      await migrationErrorOf(
        applyPendingMigrations({ ...options, databaseUrl: url.toString().replace(/:\d+\//, ':1/') }),
      ),
    ];
    expect(errors.map((e) => e.code)).toEqual(['apply_failed', 'failed_migration', 'connection_failed']);
    expect(logger.lines.join('\n')).toContain('***');
    const everything = [...logger.lines, ...errors.flatMap((e) => [e.message, String(e.cause)])].join('\n');
    expect(everything).not.toContain('s3cret-pass-word');
  });
});

it('refuses a database that has tables but no migration history (Prisma P3005)', async () => {
  const { db, copy } = await setUp('refuse_not_empty');
  await db.sql.query('CREATE TABLE "someone_elses" ("x" INTEGER)');
  const error = await migrationErrorOf(
    applyPendingMigrations({ databaseUrl: db.url, migrationsDir: copy.dir }),
  );
  expect(error.code).toBe('schema_not_empty');
  expect(error.message).toContain('someone_elses');
  expect(await tableExists(db.sql, '_prisma_migrations')).toBe(false);
});

it('refuses, before touching the database, a migration that begins or commits a transaction itself', async () => {
  const { db, copy } = await setUp('refuse_tx_control');
  await copy.write(NEXT, `BEGIN;\n${NEXT_SQL}COMMIT;\n`);
  const error = await migrationErrorOf(
    applyPendingMigrations({ databaseUrl: db.url, migrationsDir: copy.dir }),
  );
  expect(error.code).toBe('transaction_control');
  expect(error.message).toContain(`${NEXT}\` has a BEGIN statement (line 1`);
  expect(await tableExists(db.sql, '_prisma_migrations')).toBe(false);
});

it('refuses a migrations folder whose lock file names another provider', async () => {
  const { db, copy } = await setUp('refuse_provider');
  await writeFile(path.join(copy.dir, 'migration_lock.toml'), 'provider = "mysql"\n');
  const error = await migrationErrorOf(
    applyPendingMigrations({ databaseUrl: db.url, migrationsDir: copy.dir }),
  );
  expect(error.code).toBe('provider_mismatch');
  expect(error.message).toContain('mysql');
});
