// The CLI finds a running demo by itself from the project directory (cli/demo-env-discovery.ts).
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { withRunningDemo } from '../../src/cli/demo-env-discovery.js';
import { cliEnvFileText, writeCliEnvFile } from '../../src/demo/cli-env-file.js';

let project: string;
const settings = {
  DATABASE_URL: 'postgresql://postgres:pw@127.0.0.1:46807/slotfeed',
  REDIS_URL: 'redis://127.0.0.1:6379',
  REDIS_PREFIX: 'slotfeed-demo',
  PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
  TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' as const,
  SIMULATOR_URL: 'http://127.0.0.1:34525',
};
const alive = () => true;

beforeAll(async () => {
  project = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-discovery-'));
  await mkdir(path.join(project, '.slotfeed'));
  await writeCliEnvFile(
    path.join(project, '.slotfeed', 'demo.env'),
    cliEnvFileText({ ...settings, SLOTFEED_DEMO_PID: '4242' }, 'node dist/cli.js connections list'),
  );
});
afterAll(async () => {
  await rm(project, { recursive: true, force: true });
});

describe('the CLI run from a directory whose demo is running', () => {
  it('reads everything the demo wrote, the token key and loopback webhooks included', () => {
    const found = withRunningDemo(['webhooks', 'create'], { PATH: '/bin' }, project, alive);
    expect(found.env).toEqual({ ...settings, PATH: '/bin' });
    expect(found.note).toBe('slotfeed: using the running demo (.slotfeed/demo.env)');
  });

  it('names a data folder elsewhere (SLOTFEED_DATA_DIR) by its own path, not by one climbing out of here', async () => {
    const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-discovery-data-'));
    try {
      await writeCliEnvFile(
        path.join(elsewhere, 'demo.env'),
        cliEnvFileText({ ...settings, SLOTFEED_DEMO_PID: '4242' }, 'node dist/cli.js connections list'),
      );
      const found = withRunningDemo(['feeds', 'list'], { SLOTFEED_DATA_DIR: elsewhere }, project, alive);
      expect(found.note).toBe(`slotfeed: using the running demo (${path.join(elsewhere, 'demo.env')})`);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it("lets the shell's own variables win, as node --env-file does", () => {
    const found = withRunningDemo(['feeds', 'list'], { REDIS_PREFIX: 'mine' }, project, alive);
    expect(found.env.REDIS_PREFIX).toBe('mine');
    expect(found.env.DATABASE_URL).toBe(settings.DATABASE_URL);
  });

  it('reads none of it when the shell’s DATABASE_URL names another database, and says so', () => {
    const production = 'postgresql://slotfeed:secret@db.internal:5432/slotfeed';
    const found = withRunningDemo(['feeds', 'create'], { DATABASE_URL: production }, project, alive);
    expect(found.env).toEqual({ DATABASE_URL: production });
    expect(found.note).toBe(
      "slotfeed: not reading .slotfeed/demo.env: DATABASE_URL names another database than the running demo's",
    );
    for (const other of [
      'postgresql://postgres:pw@127.0.0.1:46807/other',
      'postgresql://postgres:pw@127.0.0.1:5432/slotfeed',
    ]) {
      expect(withRunningDemo(['feeds', 'list'], { DATABASE_URL: other }, project, alive).env).toEqual({
        DATABASE_URL: other,
      });
    }
  });

  it('reads it when the shell’s DATABASE_URL names the demo’s own database', () => {
    const same = 'postgresql://postgres:pw@127.0.0.1:46807/slotfeed?connection_limit=5';
    const found = withRunningDemo(['feeds', 'list'], { DATABASE_URL: same }, project, alive);
    expect(found.env.TOKEN_ENCRYPTION_KEY).toBe(settings.TOKEN_ENCRYPTION_KEY);
    expect(found.env.DATABASE_URL).toBe(same);
    expect(found.note).toBe('slotfeed: using the running demo (.slotfeed/demo.env)');
  });

  it('never gives a daemon role or a new demo the running demo’s settings', () => {
    for (const command of ['start', 'worker', 'web', 'scheduler', 'demo', 'simulator']) {
      expect(withRunningDemo([command], {}, project, alive)).toEqual({ env: {} });
    }
  });

  it('ignores, and says so, a file left by a demo that is no longer running', () => {
    const found = withRunningDemo(['connections', 'list'], {}, project, () => false);
    expect(found.env).toEqual({});
    expect(found.note).toMatch(
      /ignoring \.slotfeed\/demo\.env: the demo that wrote it \(pid 4242\) is no longer running/,
    );
  });

  it('finds it through SLOTFEED_DATA_DIR from anywhere, and nothing where there is none', () => {
    const elsewhere = withRunningDemo(
      ['connections', 'list'],
      { SLOTFEED_DATA_DIR: path.join(project, '.slotfeed') },
      os.tmpdir(),
      alive,
    );
    expect(elsewhere.env.DATABASE_URL).toBe(settings.DATABASE_URL);
    expect(withRunningDemo(['connections', 'list'], {}, os.tmpdir(), alive)).toEqual({ env: {} });
  });
});
