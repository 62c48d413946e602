import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli/program.js';
import { spawnSlotfeed } from '../support/child-process.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { REAL_MIGRATIONS } from '../store/helpers/runner-fixtures.js';

let db: TestDatabase;
let stderr: string;
let stdout: string;

beforeAll(async () => {
  db = await createTestDatabase('cli');
});
afterAll(async () => {
  await db.drop();
});

async function run(args: string[], env: Record<string, string> = {}) {
  stderr = '';
  stdout = '';
  return runCli(args, env, {
    stdout: { write: (text) => void (stdout += text), isTTY: false },
    stderr: { write: (text) => void (stderr += text) },
  });
}

describe('slotfeed exit codes and messages', () => {
  it('exits 2 and names the variable when the configuration is missing', async () => {
    expect(await run(['migrate'])).toBe(2);
    expect(stderr).toMatch(/DATABASE_URL is required/);
  });

  it('without DATABASE_URL, says it is not set and that a running demo is found from the project directory', async () => {
    for (const args of [
      ['connections', 'list'],
      ['feeds', 'list'],
      ['sync', '--all'],
    ]) {
      expect(await run(args, { LOG_LEVEL: 'silent' })).toBe(2);
      expect(stderr).toContain(
        'DATABASE_URL is not set. A demo that is running (`npm run demo`) is found by itself when the CLI runs ' +
          'from the project directory; to use another database, set DATABASE_URL (.env.example lists every ' +
          'variable).\n',
      );
    }
    // Set but wrong: the problem is its value, not where to find a database.
    expect(await run(['connections', 'list'], { DATABASE_URL: 'mysql://db/slotfeed' })).toBe(2);
    expect(stderr).toMatch(/DATABASE_URL/);
    expect(stderr).not.toContain('npm run demo');
  });

  it('exits 2 on bad usage', async () => {
    expect(await run(['sync'], { DATABASE_URL: db.url })).toBe(2);
    expect(stderr).toMatch(/give connection ids or --all/);
    expect(await run(['sync', 'not-an-id'])).toBe(2);
    expect(stderr).toMatch(/not a connection id: not-an-id/);
    expect(await run(['simulator', '--port', 'eighty'])).toBe(2);
    expect(stderr).toMatch(/expected a whole number/);
  });

  it('reports migration status and exits 0', async () => {
    expect(await run(['migrate', '--status'], { DATABASE_URL: db.url, LOG_LEVEL: 'silent' })).toBe(0);
    expect(stdout).toBe(`applied: ${REAL_MIGRATIONS.length}\n`);
    expect(await run(['migrate'], { DATABASE_URL: db.url, LOG_LEVEL: 'silent' })).toBe(0);
    expect(stdout).toMatch(/Database is up to date/);
  });

  it('prints only its answer for migrate --status at the default log level, as a person runs it', async () => {
    // Its own process: the log goes to the process's stdout, where the answer goes.
    const status = spawnSlotfeed(['migrate', '--status'], { DATABASE_URL: db.url });
    // Its output is whole once its pipes have closed, which may come after the process has exited.
    const closed = once(status.child, 'close');
    expect((await status.exited).code).toBe(0);
    await closed;
    expect(status.output()).toBe(`applied: ${REAL_MIGRATIONS.length}\n`);
  });

  it('exits 1 on a failure and says what failed without leaking the password', async () => {
    const env = { DATABASE_URL: 'postgresql://slotfeed:s3cret@127.0.0.1:1/none', LOG_LEVEL: 'silent' };
    expect(await run(['migrate'], env)).toBe(1);
    expect(stderr).toMatch(/^slotfeed: /);
    expect(stderr).not.toContain('s3cret');
  });
});
