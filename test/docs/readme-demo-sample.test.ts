// The README's sample of what `npm run demo` prints, held to the code that prints it: the Redis line with the
// data directory's own key prefix, the CalDAV server's line and the calendar's, and what the README and the
// owner's page say about how soon a calendar gets a change (the same words: "within seconds").
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { demoRedisPrefix } from '../../src/demo/demo-env.js';
import { describeRedis } from '../../src/demo/demo-summary.js';
import { PROGRESS_LINE_INTERVAL_MS } from '../../src/demo/demo-history.js';
import { describeLocalCalDav } from '../../src/demo/local-caldav.js';
import type { LocalRedis } from '../../src/demo/local-redis.js';
import {
  CALDAV_NOTICES,
  caldavSection,
  OWNER_CALDAV_PATHS,
} from '../../src/web/caldav/caldav-destinations-section.js';

const readme = await readFile(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const sample = readme.slice(
  readme.indexOf('```\nStarting the slotfeed demo'),
  readme.indexOf('\nfeeds ready\n'),
);
const lineStarting = (prefix: string) => sample.split('\n').find((line) => line.startsWith(prefix)) ?? '';

describe('the README’s sample of the demo’s output', () => {
  it('shows the Redis prefix the demo gives its data directory', () => {
    const dataDir = /^Starting the slotfeed demo \(data in (\S+)\)$/m.exec(sample)?.[1];
    expect(dataDir).toBeDefined();
    const redis = { source: 'default', url: 'redis://127.0.0.1:6379' } as LocalRedis;
    expect(lineStarting('Redis: ')).toBe(describeRedis(redis, demoRedisPrefix(dataDir!)));
  });

  it('has the CalDAV server’s line as the demo prints it', () => {
    const line = lineStarting('CalDAV: ');
    const shown = /^CalDAV: Radicale started \(pid (\d+), (\S+), calendars in (\S+)\)$/.exec(line);
    expect(shown).not.toBeNull();
    const printed = describeLocalCalDav({
      state: 'started',
      server: { kind: 'radicale', pid: Number(shown![1]), baseUrl: shown![2]! },
      dir: shown![3]!,
    } as Parameters<typeof describeLocalCalDav>[0]);
    expect(line).toBe(printed);
  });

  it('has the calendar’s lines, and says how soon it changes in the owner page’s words', () => {
    expect(sample).toContain(
      "\nLinus Turing's free time in a CalDAV calendar (Radicale on this machine), written within seconds of each sync:\n",
    );
    expect(sample).toMatch(/\n {2}calendar: http:\/\/127\.0\.0\.1:\d+\/\S+\/\n/);
    expect(readme).toMatch(/CalDAV server \([^)]*\), within seconds of\s+each sync/);
    const section = String(
      caldavSection({
        feedId: 'feed-1',
        title: 'Write into my calendar (CalDAV)',
        destinations: [],
        paths: OWNER_CALDAV_PATHS,
        zone: 'Europe/Berlin',
        now: new Date('2026-03-02T09:00:00Z'),
      }),
    ).replace(/\s+/g, ' ');
    expect(section).toContain('within seconds of each change');
    expect(section).not.toContain('within a minute');
    expect(CALDAV_NOTICES['caldav-pushed']).toBe(
      'Push queued: the calendar gets what changed within seconds.',
    );
  });
});

describe('docs/demo.md on the history’s progress', () => {
  it('says how often a line comes off a terminal, and shows one as the demo prints it', async () => {
    const demoDoc = (
      await readFile(fileURLToPath(new URL('../../docs/demo.md', import.meta.url)), 'utf8')
    ).replace(/\s+/g, ' ');
    expect(demoDoc).toContain(`a line every ${PROGRESS_LINE_INTERVAL_MS / 1000} seconds`);
    const example = /`(Recording the history: [^`]+)`/.exec(demoDoc)?.[1];
    expect(example).toMatch(
      /^Recording the history: \d{4}-\d{2}-\d{2} \(sync round \d+ of 42\), \d+ s so far$/,
    );
  });
});
