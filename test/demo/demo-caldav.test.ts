// The demo with a CalDAV server installed (Debian's radicale): started as a person starts it, in a scratch data
// directory, it starts Radicale beside Postgres, writes the first account's free time into a calendar there and
// prints where a CalDAV client finds it, with the user and password. Read by an independent client
// (python3-caldav) with what was printed, the calendar holds the feed's events, exactly. Ctrl-C (SIGINT to the
// whole process group, as a terminal sends it) stops the demo cleanly and leaves no Radicale running. Started
// again, the demo finds its destination there already: the same calendar URL, each event once.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEFAULT_REDIS_URL, redisAnswers } from '../../src/demo/local-redis.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { eventsOf } from '../feeds/feed-fixtures.js';
import { readBack } from '../support/caldav-servers.js';
import { waitFor } from '../support/wait-for.js';
import { isAlive, processesMentioning } from '../support/processes.js';
import { patient } from '../support/patience.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const redisPrefix = `slotfeed-demo-caldav-test-${randomBytes(4).toString('hex')}`;
let workDir: string;
let dataDir: string;
const jobs: Job[] = [];

interface Job {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `slotfeed demo --accounts 1` as a shell starts a foreground job: the leader of a process group of its own. */
function startDemo(): Job {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'demo', '--accounts', '1'], {
    cwd: projectRoot,
    env: {
      // Debian's radicale is in /usr/bin, where the machine's PATH has it.
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      SLOTFEED_DATA_DIR: dataDir,
      REDIS_PREFIX: redisPrefix,
      WEB_PORT: '0',
      LOG_LEVEL: 'warn',
      SYNC_HORIZON_DAYS: '7',
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const job = { child, stdout: () => stdout, stderr: () => stderr, closed };
  jobs.push(job);
  return job;
}

async function untilFeedsReady(job: Job): Promise<string> {
  await waitFor(
    async () => job.stdout(),
    (out) => out.includes('\nfeeds ready\n') || job.child.exitCode !== null,
    // A first start records a history (one account: some 30 s); a restart takes a few seconds. A ceiling only.
    { timeoutMs: 150_000, intervalMs: 200, what: 'the demo to print "feeds ready"' },
  );
  if (!job.stdout().includes('\nfeeds ready\n'))
    throw new Error(`the demo did not get ready:\n${job.stdout()}\n${job.stderr()}`);
  return job.stdout();
}

/** What the demo printed about its calendar. */
function printedCalendar(out: string) {
  const started = /^CalDAV: Radicale started \(pid (\d+), (\S+), calendars in (.+)\)$/m.exec(out);
  const calendar = /^ {2}calendar: (\S+)$/m.exec(out);
  const login = /^ {2}server: {3}(\S+) {2}\(user (\S+), password (\S+)\)$/m.exec(out);
  const feed = /^ {4}feed: {3}(\S+)$/m.exec(out);
  if (!started || !calendar || !login || !feed) throw new Error(`the demo printed no calendar:\n${out}`);
  return {
    pid: Number(started[1]),
    baseUrl: started[2]!,
    calendarUrl: calendar[1]!,
    serverUrl: login[1]!,
    username: login[2]!,
    password: login[3]!,
    feedUrl: feed[1]!,
  };
}

type Printed = ReturnType<typeof printedCalendar>;

/** An iCalendar UTC date-time (20260302T100000Z) as the reader prints it (2026-03-02T10:00:00Z). */
const isoOf = (stamp: string | undefined) =>
  stamp?.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z') ?? null;
const byUid = <T extends { uid: string }>(a: T, b: T) => (a.uid < b.uid ? -1 : 1);

/** The feed's events as its .ics shows them, and slotfeed's in the calendar as python3-caldav reads them. */
async function feedAndCalendar(printed: Printed) {
  const response = await fetch(printed.feedUrl);
  expect(response.status).toBe(200);
  const feed = eventsOf(await response.text())
    .map((event) => ({
      uid: event.get('UID')!,
      summary: event.get('SUMMARY')!,
      dtstart: isoOf(event.get('DTSTART')),
      dtend: isoOf(event.get('DTEND')),
    }))
    .sort(byUid);
  const calendar = (await readBack(printed, printed.calendarUrl))
    .filter((event) => event.marker !== null)
    .map(({ uid, summary, dtstart, dtend }) => ({ uid, summary, dtstart, dtend }))
    .sort(byUid);
  return { feed, calendar };
}

/** Waits until the calendar holds exactly the feed's events (pushes follow the syncs within seconds). */
const untilCalendarIsFeed = (printed: Printed) =>
  waitFor(
    () => feedAndCalendar(printed),
    ({ feed, calendar }) => feed.length > 0 && JSON.stringify(calendar) === JSON.stringify(feed),
    { timeoutMs: 60_000, intervalMs: 500, what: 'the calendar to hold the feed’s events' },
  );

/** Ctrl-C: SIGINT to the demo's whole process group; what is left running after it exits. */
async function pressCtrlC(job: Job, printed: Printed) {
  process.kill(-job.child.pid!, 'SIGINT');
  const exit = await job.closed;
  return {
    exit,
    saidStopped: job.stdout().includes('\nStopped; nothing left running.\n'),
    radicaleLeft: isAlive(printed.pid),
    leftInDataDir: await processesMentioning(dataDir),
  };
}

const CLEAN = { exit: { code: 0, signal: null }, saidStopped: true, radicaleLeft: false, leftInDataDir: [] };

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-demo-caldav-'));
  // Run as root, the embedded server runs as the `postgres` user, which must be able to enter this directory.
  await chmod(workDir, 0o755);
  dataDir = path.join(workDir, 'data');
});

afterAll(async () => {
  for (const job of jobs) {
    if (job.child.exitCode === null && job.child.signalCode === null)
      process.kill(-job.child.pid!, 'SIGKILL');
  }
  for (const pid of await processesMentioning(dataDir)) process.kill(pid, 'SIGKILL');
  await rm(workDir, { recursive: true, force: true });
  if (await redisAnswers(DEFAULT_REDIS_URL)) {
    const redis = createRedisConnection(DEFAULT_REDIS_URL, 'command', 'demo-caldav-test-cleanup');
    const keys = await redis.keys(`${redisPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
});

describe('the demo with Radicale installed', () => {
  let first: Printed;

  it(
    'writes the first account’s free time into a calendar of its Radicale, and Ctrl-C leaves no Radicale running',
    async () => {
      const demo = startDemo();
      first = printedCalendar(await untilFeedsReady(demo));
      expect(first.calendarUrl.startsWith(first.baseUrl)).toBe(true);
      expect(first.serverUrl).toBe(first.baseUrl);
      expect(first.username).toBe('demo');
      // The password printed is the demo's own, kept in demo.json.
      const secrets = JSON.parse(await readFile(path.join(dataDir, 'demo.json'), 'utf8')) as {
        caldavPassword: string;
      };
      expect(first.password).toBe(secrets.caldavPassword);
      // Its calendars are in the data directory, where a restart finds them.
      expect(demo.stdout()).toContain(`calendars in ${path.join(dataDir, 'caldav')})`);

      const { feed, calendar } = await untilCalendarIsFeed(first);
      expect(calendar).toEqual(feed);

      expect(await pressCtrlC(demo, first)).toEqual(CLEAN);
    },
    patient(240_000),
  );

  it(
    'started again: the same calendar, its destination already there, each event once',
    async () => {
      const demo = startDemo();
      const again = printedCalendar(await untilFeedsReady(demo));
      expect(again.calendarUrl).toBe(first.calendarUrl);
      expect(again.pid).not.toBe(first.pid);
      const { calendar } = await untilCalendarIsFeed(again);
      expect(new Set(calendar.map((event) => event.uid)).size).toBe(calendar.length);
      // One calendar of slotfeed's on the server, not a second one made by a second destination.
      const home = await fetch(new URL('/demo/', again.baseUrl), {
        method: 'PROPFIND',
        headers: {
          Depth: '1',
          Authorization: `Basic ${Buffer.from(`${again.username}:${again.password}`).toString('base64')}`,
        },
      });
      const listing = await home.text();
      expect(listing.match(/Free time \(slotfeed\)/g)).toHaveLength(1);

      expect(await pressCtrlC(demo, again)).toEqual(CLEAN);
    },
    patient(180_000),
  );
});
