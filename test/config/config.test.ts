import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli/program.js';
import { ConfigError, describeVariables, loadConfig } from '../../src/config.js';
import { weaknessOf } from '../../src/lib/secret-strength.js';

const upstreamEnv = {
  CALENDBOOK_BASE_URL: 'https://api.calendbook.test/',
  CALENDBOOK_AUTH_URL: 'https://auth.calendbook.test',
  CALENDBOOK_CLIENT_ID: 'client-1',
  CALENDBOOK_CLIENT_SECRET: 'hunter2-secret',
  CALENDBOOK_REDIRECT_URI: 'https://slotfeed.example/oauth/callback',
};

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (e: unknown) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies documented defaults and normalises URLs', () => {
    const config = loadConfig({ ...upstreamEnv }, ['upstream', 'redis', 'log']);
    expect(config.upstream.baseUrl).toBe('https://api.calendbook.test');
    expect(config.upstream.slotsQuery).toEqual({ dateParam: 'date', timezoneParam: 'timezone' });
    expect(config.upstream.timeoutMs).toBe(10_000);
    expect(config.redis).toEqual({
      url: 'redis://127.0.0.1:6379',
      prefix: 'slotfeed',
      shards: 1,
      clusterNodes: [],
    });
    expect(config.log.level).toBe('info');
  });

  it('reads only the sections a command asks for', () => {
    // `slotfeed migrate` must not demand OAuth client settings.
    const config = loadConfig({ DATABASE_URL: 'postgresql://u@db:5432/slotfeed' }, ['database']);
    expect(config).toEqual({
      database: {
        url: 'postgresql://u@db:5432/slotfeed',
        statementTimeoutMs: 10_000,
        lockTimeoutMs: 3000,
        preparedStatements: 200,
      },
    });
  });

  it('names every missing or wrong variable at once', () => {
    const problems = problemsOf(() =>
      loadConfig({ ...upstreamEnv, CALENDBOOK_TIMEOUT_MS: 'soon', LOG_LEVEL: 'loud' }, [
        'database',
        'upstream',
        'log',
      ]),
    );
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^DATABASE_URL is required/);
    expect(problems.join('\n')).toMatch(/CALENDBOOK_TIMEOUT_MS .*\(got "soon"\)/);
    expect(problems.join('\n')).toMatch(/LOG_LEVEL .*\(got "loud"\)/);
  });

  it('rejects a URL of the wrong kind', () => {
    const problems = problemsOf(() => loadConfig({ DATABASE_URL: 'mysql://root@db/x' }, ['database']));
    expect(problems[0]).toMatch(/DATABASE_URL must be a postgres/);
  });

  it('never echoes a secret value back', () => {
    const problems = problemsOf(() =>
      loadConfig({ DATABASE_URL: 'not a url with password s3cr3t' }, ['database']),
    );
    expect(problems[0]).toMatch(/^DATABASE_URL/);
    expect(problems.join()).not.toContain('s3cr3t');
  });

  it('treats an empty value as unset', () => {
    const config = loadConfig({ REDIS_PREFIX: '' }, ['redis']);
    expect(config.redis.prefix).toBe('slotfeed');
  });
});

describe('ADMIN_TOKEN', () => {
  const web = (token: string) => loadConfig({ ADMIN_TOKEN: token }, ['web']).web.adminToken;

  it('takes a generated token, or empty (admin disabled)', () => {
    for (const token of [
      randomBytes(24).toString('base64url'),
      randomBytes(32).toString('base64'),
      randomBytes(16).toString('hex'),
      'admin-token-for-tests-0123456789',
      '',
    ]) {
      expect(web(token)).toBe(token);
    }
  });

  it('refuses a short or guessable one with a message that names the variable and never echoes it', () => {
    const cases: [string, RegExp][] = [
      ['s3cret-admin-token', /^ADMIN_TOKEN is too short: it has 18 characters and needs at least 32/],
      ['a'.repeat(40), /^ADMIN_TOKEN is too easy to guess/],
      ['0123456789'.repeat(4), /^ADMIN_TOKEN is too easy to guess/],
      ['abcdefghijklmnopqrstuvwxyz0123456789', /^ADMIN_TOKEN is too easy to guess/],
      ['passwordpasswordpasswordpassword1', /^ADMIN_TOKEN is too easy to guess/],
    ];
    for (const [token, message] of cases) {
      const problems = problemsOf(() => web(token));
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(message);
      expect(problems[0]).toContain('openssl rand -base64 32');
      expect(problems[0]).not.toContain(token);
    }
  });

  it('refuses no generated token: 20,000 of each common kind pass', () => {
    const rule = { minLength: 32, minBits: 80 };
    // Bytes as a generator makes them, but the same on every run (SHA-512 of a counter): a check this
    // statistical must not pass or fail by the luck of one run's draw.
    const bytes = (n: number, i: number) => createHash('sha512').update(`token ${i}`).digest().subarray(0, n);
    for (const make of [
      (i: number) => bytes(16, i).toString('hex'),
      (i: number) => bytes(24, i).toString('base64url'),
      (i: number) => bytes(32, i).toString('base64'),
    ]) {
      for (let i = 0; i < 20_000; i++) expect(weaknessOf(make(i), rule)).toBeUndefined();
    }
  });

  it('stops `slotfeed web` at start-up, exit code 2, before anything is opened', async () => {
    let stderr = '';
    const env = {
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/never-opened',
      CALENDBOOK_BASE_URL: 'https://api.calendbook.test',
      CALENDBOOK_AUTH_URL: 'https://auth.calendbook.test',
      CALENDBOOK_CLIENT_ID: 'client-1',
      CALENDBOOK_CLIENT_SECRET: 'hunter2-secret',
      CALENDBOOK_REDIRECT_URI: 'https://slotfeed.example/oauth/callback',
      TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ADMIN_TOKEN: 'changeme-changeme-changeme-changeme',
    };
    const code = await runCli(['web'], env, {
      stdout: { write: () => undefined, isTTY: false },
      stderr: { write: (text) => void (stderr += text) },
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/ADMIN_TOKEN is too easy to guess/);
    expect(stderr).not.toContain('changeme');
  });
});

describe('the configuration table in docs/configuration.md', () => {
  it('documents every variable slotfeed reads', () => {
    const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const undocumented = describeVariables()
      .map((v) => v.name)
      .filter((name) => !page.includes(`| \`${name}\``));
    expect(undocumented).toEqual([]);
  });
});
