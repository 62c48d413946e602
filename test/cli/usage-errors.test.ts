// Bad usage exits 2 (README, "Commands"): a value a command refuses, a required option left out, options that
// conflict. Each message names the option, and nothing is written: the command line is refused before the
// database is touched, so the same line fails alike with no database configured at all.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCapturedCli } from '../support/cli-run.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let env: Record<string, string>;
const ada = randomUUID();

beforeAll(async () => {
  db = await createTestDatabase('usage_cli');
  await db.prisma.connection.create({
    data: { id: ada, upstreamUserId: 'usr_usage', email: 'ada@example.test', displayName: 'Ada' },
  });
  env = { DATABASE_URL: db.url, LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'https://slotfeed.example' };
  expect((await runCapturedCli(env, ['teams', 'create', 'Ops', ada])).code).toBe(0);
});
afterAll(async () => {
  await db.drop();
});

const storedRows = async () => ({
  feeds: await db.prisma.feed.count(),
  apiKeys: await db.prisma.apiKey.count(),
  teams: await db.prisma.team.count(),
});

/** Exits 2 naming every one of `named` on stderr, with the database configured and without it; writes nothing. */
async function expectUsageError(args: string[], named: string[]) {
  const before = await storedRows();
  for (const environment of [env, { LOG_LEVEL: 'silent' }]) {
    const run = await runCapturedCli(environment, args);
    expect({ args, code: run.code }).toEqual({ args, code: 2 });
    for (const text of named) expect(run.stderr).toContain(text);
    expect(run.stderr).not.toContain('DATABASE_URL');
    expect(run.stdout).toBe('');
  }
  expect(await storedRows()).toEqual(before);
}

describe('usage errors exit 2, name the option and write nothing', () => {
  it('teams feed: a minimum with mode any', async () => {
    await expectUsageError(
      ['teams', 'feed', 'Ops', '--mode', 'any', '--minimum', '2'],
      ['--minimum', '--mode any', 'minimum applies to team feeds in mode all'],
    );
  });

  it('teams feed and feeds create: an empty summary', async () => {
    await expectUsageError(['teams', 'feed', 'Ops', '--summary', ' '], ['--summary']);
    await expectUsageError(['feeds', 'create', ada, '--summary', ''], ['--summary']);
  });

  it('feeds create: options of another view', async () => {
    await expectUsageError(['feeds', 'create', ada, '--merge'], ['--merge', '--view free']);
    await expectUsageError(
      ['feeds', 'create', ada, '--view', 'busy', '--summary', 'Away'],
      ['--summary', '--view busy'],
    );
  });

  it('api-keys create: no scope, or an empty label', async () => {
    await expectUsageError(
      ['api-keys', 'create', '--label', 'dashboard'],
      ['--connection', '--team', 'at least one'],
    );
    await expectUsageError(['api-keys', 'create', '--label', '  ', '--connection', ada], ['--label']);
  });

  it('teams create: an empty name', async () => {
    await expectUsageError(['teams', 'create', '  '], ["argument 'name'", 'a team needs a name']);
  });

  it('sync: ids and --all together', async () => {
    await expectUsageError(['sync', ada, '--all'], ['--all']);
  });
});
