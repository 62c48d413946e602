import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { ConfigError, describeVariables, loadConfig } from '../../src/config.js';

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
    expect(config.redis).toEqual({ url: 'redis://127.0.0.1:6379', prefix: 'slotfeed' });
    expect(config.log.level).toBe('info');
  });

  it('reads only the sections a command asks for', () => {
    // `slotfeed migrate` must not demand OAuth client settings.
    const config = loadConfig({ DATABASE_URL: 'postgresql://u@db:5432/slotfeed' }, ['database']);
    expect(config).toEqual({ database: { url: 'postgresql://u@db:5432/slotfeed' } });
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

describe('README configuration table', () => {
  it('documents every variable slotfeed reads', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const undocumented = describeVariables()
      .map((v) => v.name)
      .filter((name) => !readme.includes(`| \`${name}\``));
    expect(undocumented).toEqual([]);
  });
});
