// The demo's pure parts and its secrets file: reading a feed URL off the callback page, first-sync states and
// progress, the printed summary, the environment the daemon is configured from, and the env file for the CLI.
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../src/config.js';
import { cliEnvFileText, cliInvocation, writeCliEnvFile } from '../../src/demo/cli-env-file.js';
import { feedTokenInPage } from '../../src/demo/connect-demo-account.js';
import { demoEnvironment, demoPaths, demoRedisPrefix } from '../../src/demo/demo-env.js';
import { loadOrCreateDemoSecrets, newDemoSecrets } from '../../src/demo/demo-secrets.js';
import { formatDemoSummary, shellQuote } from '../../src/demo/demo-summary.js';
import { firstSyncState, formatProgressLine, type FirstSyncRow } from '../../src/demo/first-syncs.js';
import { DAEMON_SECTIONS } from '../../src/composition/daemon-config.js';

const T0 = new Date('2026-03-02T09:00:00Z');
const before = new Date('2026-03-02T08:59:00Z');
const after = new Date('2026-03-02T09:00:05Z');
const TOKEN = 'Ab_-0123456789abcdefghijklmnopqrstuvwxyzABCD';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-demo-pieces-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('feedTokenInPage', () => {
  it('reads the token from the owner page’s first read-only feed URL field, HTML entities and all', () => {
    const page = `<p><label for="feed-url-1">Feed address</label><br />
      <input id="feed-url-1" type="text" readonly value="http://127.0.0.1:3000/feeds/${TOKEN}.ics" /></p>
      <input id="feed-webcal" type="text" readonly value="webcal://127.0.0.1:3000/feeds/other.ics" />`;
    expect(feedTokenInPage(page)).toBe(TOKEN);
    const escaped = page.replace('http://127.0.0.1:3000', 'http://h.test/a&amp;b');
    expect(feedTokenInPage(escaped)).toBe(TOKEN);
  });

  it('finds none on a page without the field (a feed whose URL cannot be shown again)', () => {
    expect(
      feedTokenInPage('<h1>Your availability</h1><p id="feed-hidden-1">Replace its address</p>'),
    ).toBeNull();
  });
});

describe('first syncs', () => {
  const connection = {
    status: 'active' as const,
    lastSyncAt: after,
    lastSyncOutcome: 'succeeded' as const,
    lastSyncError: null,
  };

  it('counts only a sync that ended after the connect', () => {
    expect(firstSyncState(connection, T0)).toBe('synced');
    expect(firstSyncState({ ...connection, lastSyncAt: before }, T0)).toBe('waiting');
    expect(firstSyncState({ ...connection, lastSyncAt: null, lastSyncOutcome: null }, T0)).toBe('waiting');
    expect(firstSyncState({ ...connection, lastSyncOutcome: 'failed' }, T0)).toBe('retrying');
    expect(firstSyncState({ ...connection, status: 'needs_reauth' }, T0)).toBe('failed');
  });

  it('shows progress on one line', () => {
    const rows: FirstSyncRow[] = [
      { connectionId: 'a', label: 'Ada', state: 'synced', slots: 12, error: null },
      { connectionId: 'b', label: 'Bob', state: 'waiting', slots: 0, error: null },
      { connectionId: 'c', label: 'Cy', state: 'retrying', slots: 0, error: 'HTTP 503' },
    ];
    expect(formatProgressLine(rows)).toBe('First syncs 1/3: ✓ Ada (12 free slots)  … Bob  ↻ Cy');
  });
});

describe('formatDemoSummary', () => {
  const https = `http://127.0.0.1:3000/feeds/${TOKEN}.ics`;
  const text = formatDemoSummary({
    webUrl: 'http://127.0.0.1:3000',
    adminToken: 'admin-token-0123456789',
    feeds: [
      {
        name: 'Ada Knuth',
        email: 'ada@example.test',
        https,
        webcal: https.replace('http:', 'webcal:'),
        sync: { connectionId: 'a', label: 'Ada Knuth', state: 'synced', slots: 7, error: null },
        reconnected: false,
      },
    ],
    cli: 'node dist/cli.js',
  });

  it('prints the admin URL and token, both feed URLs, a curl command, and `feeds ready` on a line of its own', () => {
    expect(text).toContain('Admin page:  http://127.0.0.1:3000/admin\n');
    // Loopback links say that cloud calendars cannot fetch them.
    expect(text).toContain('Google Calendar and Outlook cannot reach them');
    expect(text).toContain('Admin token: admin-token-0123456789\n');
    expect(text).toContain('Ada Knuth <ada@example.test>: 7 free slots\n');
    expect(text).toContain(`    feed:   ${https}\n    webcal: webcal://127.0.0.1:3000/feeds/${TOKEN}.ics\n`);
    expect(text).toContain(`  curl -fsS '${https}'\n`);
    expect(text.split('\n')).toContain('feeds ready');
  });

  it('prints the command line that runs the CLI against the demo, before `feeds ready`', () => {
    const cli = text.indexOf('\n  node dist/cli.js connections list\n');
    expect(cli).toBeGreaterThan(0);
    expect(cli).toBeLessThan(text.indexOf('\nfeeds ready\n'));
  });

  it('quotes for a POSIX shell', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });
});

describe('the demo’s Redis prefix', () => {
  it('is one per data directory: two checkouts’ demos on one Redis share no queue', () => {
    const one = demoRedisPrefix('/home/ada/slotfeed/.slotfeed');
    const other = demoRedisPrefix('/home/ada/slotfeed-copy/.slotfeed');
    expect(one).toMatch(/^slotfeed-demo-[0-9a-f]{8}$/);
    expect(other).toMatch(/^slotfeed-demo-[0-9a-f]{8}$/);
    expect(one).not.toBe(other);
  });

  it('is the same for the same directory however it is written, so a restart finds its queues again', () => {
    expect(demoRedisPrefix('/home/ada/slotfeed/.slotfeed/')).toBe(
      demoRedisPrefix('/home/ada/slotfeed/.slotfeed'),
    );
    expect(demoRedisPrefix(path.relative(process.cwd(), '/srv/demo/.slotfeed'))).toBe(
      demoRedisPrefix('/srv/demo/.slotfeed'),
    );
  });
});

describe('demo configuration', () => {
  const secrets = newDemoSecrets();
  const input = {
    databaseUrl: 'postgresql://postgres:pw@127.0.0.1:55432/slotfeed',
    redisUrl: 'redis://127.0.0.1:6379',
    redisPrefix: 'slotfeed-demo',
    logLevel: 'warn',
    simulator: {
      baseUrl: 'http://127.0.0.1:4010/api',
      authUrl: 'http://127.0.0.1:4010/auth',
      clientId: 'slotfeed-local',
      clientSecret: 'slotfeed-local-secret',
    },
    webPort: 3001,
    publicBaseUrl: 'http://127.0.0.1:3001',
    secrets,
  };

  it('passes loadConfig for every daemon section, wiring the pieces together', () => {
    const config = loadConfig(demoEnvironment({ ...input, env: {} }), DAEMON_SECTIONS);
    expect(config.upstream.redirectUri).toBe('http://127.0.0.1:3001/oauth/callback');
    expect(config.web).toMatchObject({ host: '127.0.0.1', port: 3001, adminToken: secrets.adminToken });
    expect(config.vault).toEqual({ currentKey: secrets.tokenEncryptionKey, previousKeys: [] });
    expect(config.sync.rateLimit.perSecond).toBe(20_000);
    // A person trying webhooks has a receiver on this machine; only the demo allows one by default.
    expect(config.webhooks.allowPrivateTargets).toBe(true);
    expect(loadConfig({}, ['webhooks']).webhooks.allowPrivateTargets).toBe(false);
  });

  it("keeps the caller's tuning but never their real installation's key or services", () => {
    const env = {
      SYNC_HORIZON_DAYS: '7',
      UPSTREAM_RATE_LIMIT_PER_SECOND: '5',
      TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      TOKEN_ENCRYPTION_KEYS_PREVIOUS: Buffer.alloc(32, 2).toString('base64'),
      CALENDBOOK_BASE_URL: 'https://api.calendbook.example',
    };
    const config = loadConfig(demoEnvironment({ ...input, env }), DAEMON_SECTIONS);
    expect(config.sync.horizonDays).toBe(7);
    expect(config.sync.rateLimit.perSecond).toBe(5);
    expect(config.vault).toEqual({ currentKey: secrets.tokenEncryptionKey, previousKeys: [] });
    expect(config.upstream.baseUrl).toBe('http://127.0.0.1:4010/api');
  });

  it('keeps its data in .slotfeed of the project, or in SLOTFEED_DATA_DIR', () => {
    expect(demoPaths({}, '/srv/slotfeed')).toEqual({
      dataDir: '/srv/slotfeed/.slotfeed',
      secretsFile: '/srv/slotfeed/.slotfeed/demo.json',
      cliEnvFile: '/srv/slotfeed/.slotfeed/demo.env',
      webPortFile: '/srv/slotfeed/.slotfeed/web-port',
      simulatorStateFile: '/srv/slotfeed/.slotfeed/simulator.json',
      historyFile: '/srv/slotfeed/.slotfeed/history.json',
      postgresDir: '/srv/slotfeed/.slotfeed/postgres',
      migrationsDir: '/srv/slotfeed/prisma/migrations',
    });
    expect(demoPaths({ SLOTFEED_DATA_DIR: '/tmp/x' }, '/srv/slotfeed').postgresDir).toBe('/tmp/x/postgres');
  });
});

describe('loadOrCreateDemoSecrets', () => {
  it('creates owner-only secrets once and reads the same ones back', async () => {
    const file = path.join(workDir, 'a', 'demo.json');
    const first = await loadOrCreateDemoSecrets(file);
    expect(first.created).toBe(true);
    expect(Buffer.from(first.secrets.tokenEncryptionKey, 'base64')).toHaveLength(32);
    expect(first.secrets.adminToken.length).toBeGreaterThanOrEqual(16);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await loadOrCreateDemoSecrets(file)).toEqual({ secrets: first.secrets, created: false });
  });

  it('refuses a damaged file instead of replacing the key that sealed the stored tokens', async () => {
    const file = path.join(workDir, 'damaged.json');
    await writeFile(file, '{"tokenEncryptionKey": "short"}');
    await expect(loadOrCreateDemoSecrets(file)).rejects.toThrow('is damaged');
  });
});

describe('the CLI env file', () => {
  const environment = {
    DATABASE_URL: 'postgresql://postgres:0a1b2c@127.0.0.1:46807/slotfeed',
    REDIS_URL: 'redis://:p#ss word@127.0.0.1:6379/2',
    REDIS_PREFIX: 'slotfeed-demo',
    PUBLIC_BASE_URL: 'http://127.0.0.1:3001',
    TOKEN_ENCRYPTION_KEY: 'q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' as const,
    SLOTFEED_DEMO_PID: '4242',
    SIMULATOR_URL: 'http://127.0.0.1:34525',
  };

  it('reads back through Node’s env-file parser unchanged, odd characters included', () => {
    const text = cliEnvFileText(environment, 'node dist/cli.js connections list');
    expect(parseEnv(text)).toEqual(environment);
    expect(text).toContain('#   node dist/cli.js connections list\n');
    expect(() => cliEnvFileText({ ...environment, REDIS_PREFIX: "it's" }, '')).toThrow(/REDIS_PREFIX/);
  });

  it('is written owner-only', async () => {
    const file = path.join(workDir, 'demo.env');
    await writeCliEnvFile(file, cliEnvFileText(environment, ''));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('is found by the CLI from the directory that holds the data directory; elsewhere it is named', () => {
    const root = '/home/ada/slotfeed';
    const cliScript = `${root}/dist/cli.js`;
    expect(cliInvocation({ dataDir: `${root}/.slotfeed`, cliScript, cwd: root })).toBe('node dist/cli.js');
    expect(cliInvocation({ dataDir: `${root}/.slotfeed`, cliScript, cwd: '/tmp' })).toBe(
      `SLOTFEED_DATA_DIR=${root}/.slotfeed node ${cliScript}`,
    );
    expect(cliInvocation({ dataDir: '/data dir', cliScript, cwd: root })).toBe(
      "SLOTFEED_DATA_DIR='/data dir' node dist/cli.js",
    );
  });
});
