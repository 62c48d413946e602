// A real Postgres database per test file: created empty, migrated with slotfeed's own runner (so every DB test
// also exercises the migrations), dropped afterwards. Files run side by side, each in a database of its own.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { applyPendingMigrations } from '../../src/store/migrations/index.js';
import { createPrismaClient } from '../../src/store/prisma-client.js';

export const TEST_DATABASE_ADMIN_URL =
  process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../prisma/migrations',
);

const NAME_PREFIX = 'slotfeed_test_';
const COMMENT_PREFIX = 'slotfeed test database created at ';
/** Databases this old were left by a crashed or killed run; no test file runs for hours. */
const STALE_AFTER_MS = 6 * 60 * 60 * 1000;

export interface TestDatabase {
  name: string;
  url: string;
  prisma: PrismaClient;
  /** For raw SQL in tests (catalog queries, fixtures Prisma cannot express). */
  sql: pg.Pool;
  /** Disconnects both clients and drops the database; safe to call twice. */
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** Apply prisma/migrations (default). `false` leaves it empty, for tests of the migration runner itself. */
  migrate?: boolean;
  /** Another server's superuser URL: a test that stops its Postgres brings its own (default: the shared one). */
  adminUrl?: string;
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin<T>(adminUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/** Drops test databases older than STALE_AFTER_MS; best effort (another file may be dropping the same one). */
async function dropStaleDatabases(admin: pg.Client): Promise<void> {
  const result = await admin.query<{ datname: string; comment: string | null }>(
    `SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database
     WHERE datname LIKE 'slotfeed\\_test\\_%'`,
  );
  for (const { datname, comment } of result.rows) {
    const createdAt = comment?.startsWith(COMMENT_PREFIX)
      ? Date.parse(comment.slice(COMMENT_PREFIX.length))
      : NaN;
    if (Number.isNaN(createdAt) || Date.now() - createdAt < STALE_AFTER_MS) continue;
    await admin
      .query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`)
      .catch(() => undefined);
  }
}

export async function createTestDatabase(
  label: string,
  options: TestDatabaseOptions = {},
): Promise<TestDatabase> {
  const safeLabel = label
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .slice(0, 32);
  const name = `${NAME_PREFIX}${safeLabel}_${randomBytes(4).toString('hex')}`;
  const adminUrl = options.adminUrl ?? TEST_DATABASE_ADMIN_URL;
  await withAdmin(adminUrl, async (admin) => {
    await dropStaleDatabases(admin);
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    await admin.query(
      `COMMENT ON DATABASE ${pg.escapeIdentifier(name)} IS ${pg.escapeLiteral(COMMENT_PREFIX + new Date().toISOString())}`,
    );
  });

  const url = databaseUrl(adminUrl, name);
  const prisma = createPrismaClient(url);
  const sql = new pg.Pool({ connectionString: url, max: 4 });
  // Dropping the database WITH (FORCE) terminates whatever is still connected to it; an idle pooled client
  // then reports 57P01, which without a listener would crash the test process after its tests passed.
  sql.on('error', () => undefined);
  let dropping: Promise<void> | undefined;
  const drop = () =>
    (dropping ??= (async () => {
      await prisma.$disconnect().catch(() => undefined);
      await sql.end().catch(() => undefined);
      await withAdmin(adminUrl, (admin) =>
        admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
      );
    })());

  try {
    if (options.migrate !== false)
      await applyPendingMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS_DIR });
  } catch (thrown: unknown) {
    await drop().catch(() => undefined);
    throw thrown;
  }
  return { name, url, prisma, sql, drop };
}
