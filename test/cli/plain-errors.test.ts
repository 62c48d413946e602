// The failures a first run meets, said plainly with what to do, each exiting 1: Postgres not reachable, a
// database not migrated or missing, Redis not answering. And what each command reads: a variable of a section
// a command does not use cannot stop it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli/program.js';
import { freeLoopbackPort } from '../../src/demo/free-port.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let migrated: TestDatabase;
let unmigrated: TestDatabase;
let closedPort: number;

beforeAll(async () => {
  [migrated, unmigrated] = await Promise.all([
    createTestDatabase('cli_errors'),
    createTestDatabase('cli_unmigrated', { migrate: false }),
  ]);
  // Bound and released: nothing listens there for the length of this file (at worst a stray process would
  // answer, and the tests below would fail, not pass wrongly).
  closedPort = await freeLoopbackPort();
});
afterAll(async () => {
  await Promise.all([migrated.drop(), unmigrated.drop()]);
});

const serverOf = (databaseUrl: string) => {
  const url = new URL(databaseUrl);
  return `${url.hostname}:${url.port || '5432'}`;
};

async function slotfeed(env: Record<string, string>, ...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(
    args,
    { LOG_LEVEL: 'silent', ...env },
    {
      stdout: { write: (t) => void (stdout += t), isTTY: false },
      stderr: { write: (t) => void (stderr += t) },
    },
  );
  return { code, stdout, stderr };
}

describe('plain errors', () => {
  it('Postgres not reachable: names the host and port of DATABASE_URL, never its password', async () => {
    const env = { DATABASE_URL: `postgresql://slotfeed:s3cret@127.0.0.1:${closedPort}/slotfeed` };
    for (const args of [
      ['connections', 'list'],
      ['feeds', 'list'],
      ['report', 'sync-health'],
      ['report', 'utilization', '--format', 'csv'],
      ['sync', '--all'],
    ]) {
      const result = await slotfeed(env, ...args);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `slotfeed: Cannot reach Postgres at 127.0.0.1:${closedPort} (DATABASE_URL). Check that DATABASE_URL ` +
          'is right and that the server is running. To reach a running demo instead (`npm run demo`), run the ' +
          'CLI from the project directory with DATABASE_URL unset: it finds the demo by itself.\n',
      );
    }
    const migrate = await slotfeed(env, 'migrate');
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toMatch(/Check that DATABASE_URL is right and that the server is running\.\n$/);
    expect(migrate.stderr).not.toContain('s3cret');
  });

  it('a database without slotfeed’s tables: says to run `slotfeed migrate`', async () => {
    for (const args of [
      ['connections', 'list'],
      ['feeds', 'list'],
      ['report', 'availability'],
    ]) {
      const result = await slotfeed({ DATABASE_URL: unmigrated.url }, ...args);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `slotfeed: The database "${unmigrated.name}" at ${serverOf(unmigrated.url)} lacks slotfeed's tables (its ` +
          'migrations have not been applied, or not all of them). Run `slotfeed migrate` with the same ' +
          'DATABASE_URL, then try again.\n',
      );
    }
  });

  it('a database the server does not have: says how to create it', async () => {
    const url = new URL(migrated.url);
    url.pathname = '/slotfeed_no_such_database';
    const result = await slotfeed({ DATABASE_URL: url.toString() }, 'connections', 'list');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/has no database "slotfeed_no_such_database" \(DATABASE_URL\)\. Create it/);
  });

  it('Redis not answering: `sync` names REDIS_URL at once instead of waiting on it', async () => {
    const started = Date.now();
    const result = await slotfeed(
      { DATABASE_URL: migrated.url, REDIS_URL: `redis://:hunter2@127.0.0.1:${closedPort}` },
      'sync',
      '--all',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `slotfeed: Redis at redis://127.0.0.1:${closedPort} does not answer (REDIS_URL). Check REDIS_URL and ` +
        'that Redis is running there: `docker compose up -d redis`, or `apt-get install redis-server`.\n',
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('what each command reads', () => {
  // Variables of sections these commands do not use, each invalid: none of them may stop the commands.
  const unrelated = {
    CALENDBOOK_BASE_URL: 'not a url',
    TOKEN_ENCRYPTION_KEY: 'short',
    ADMIN_TOKEN: 'weak',
    WEB_PORT: 'eighty',
    TRUST_PROXY: 'perhaps',
  };

  it('connections, feeds and report need the database only; feeds create adds PUBLIC_BASE_URL and a given TOKEN_ENCRYPTION_KEY', async () => {
    const env = { ...unrelated, DATABASE_URL: migrated.url };
    expect((await slotfeed(env, 'connections', 'list')).code).toBe(0);
    expect((await slotfeed(env, 'feeds', 'list')).code).toBe(0);
    expect((await slotfeed(env, 'report', 'sync-health')).code).toBe(0);
    const id = randomUUID();
    await migrated.prisma.connection.create({ data: { id, upstreamUserId: `usr_${id}` } });
    // A new feed URL is sealed for its owner's page with TOKEN_ENCRYPTION_KEY when one is set: a bad one stops
    // feeds create (naming it); without one the feed is made all the same.
    const badKey = await slotfeed(
      { ...env, PUBLIC_BASE_URL: 'https://feeds.example' },
      'feeds',
      'create',
      id,
    );
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toMatch(/TOKEN_ENCRYPTION_KEY/);
    const created = await slotfeed(
      { ...env, TOKEN_ENCRYPTION_KEY: '', PUBLIC_BASE_URL: 'https://feeds.example' },
      'feeds',
      'create',
      id,
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^ {2}https:\/\/feeds\.example\/feeds\/\S+\.ics$/m);
    const badBase = await slotfeed(
      { ...env, TOKEN_ENCRYPTION_KEY: '', PUBLIC_BASE_URL: 'feeds.example' },
      'feeds',
      'create',
      id,
    );
    expect(badBase.code).toBe(2);
    expect(badBase.stderr).toMatch(/PUBLIC_BASE_URL/);
  });

  it('sync needs the database and Redis only: no upstream, token key or web settings', async () => {
    // Checked up to its first Redis call: with nothing answering there, it fails on Redis, not on config.
    const result = await slotfeed(
      { ...unrelated, DATABASE_URL: migrated.url, REDIS_URL: `redis://127.0.0.1:${closedPort}` },
      'sync',
      '--all',
    );
    expect(result.stderr).toMatch(/^slotfeed: Redis at /);
    expect(result.code).toBe(1);
  });
});
