// `slotfeed demo` end to end, as a child process with DATABASE_URL and REDIS_URL unset: the embedded Postgres
// (in a temporary data directory, not the repository's .slotfeed), the simulator, the real OAuth flow, the
// first syncs, a printed feed URL that serves a valid calendar, a clean exit on SIGINT with nothing left
// running, and a restart on the same data that reconnects the same accounts instead of duplicating them.
// The first start records weeks of history (src/demo/demo-history.ts), which every report and chart shows;
// the restart keeps it and adds none.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { redisAnswers, DEFAULT_REDIS_URL } from '../../src/demo/local-redis.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { spawnSlotfeed, type SlotfeedProcess } from '../support/child-process.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import { waitFor } from '../support/wait-for.js';
import { isAlive, processesMentioning } from '../support/processes.js';
import { patient } from '../support/patience.js';

let workDir: string;
let dataDir: string;
const redisPrefix = `slotfeed-demo-test-${randomBytes(4).toString('hex')}`;
const started: SlotfeedProcess[] = [];
const postgresPids: number[] = [];

interface DemoOutput {
  postgresPid: number;
  postgresPort: number;
  adminUrl: string;
  adminToken: string;
  feeds: { https: string; webcal: string }[];
  curl: string;
}

function parseOutput(text: string): DemoOutput {
  const postgres = /Postgres: embedded \(pid (\d+), 127\.0\.0\.1:(\d+)/.exec(text);
  const admin = /^Admin page: +(\S+)\/admin$/m.exec(text);
  const token = /^Admin token: +(\S+)$/m.exec(text);
  const https = [...text.matchAll(/^ {4}feed: +(\S+)$/gm)].map((m) => m[1]!);
  const webcal = [...text.matchAll(/^ {4}webcal: +(\S+)$/gm)].map((m) => m[1]!);
  const curl = /^ {2}(curl .+)$/m.exec(text);
  if (!postgres || !admin || !token || !curl) throw new Error(`unexpected demo output:\n${text}`);
  return {
    postgresPid: Number(postgres[1]),
    postgresPort: Number(postgres[2]),
    adminUrl: admin[1]!,
    adminToken: token[1]!,
    feeds: https.map((url, i) => ({ https: url, webcal: webcal[i] ?? '' })),
    curl: curl[1]!,
  };
}

async function startDemo(): Promise<{ demo: SlotfeedProcess; printed: DemoOutput }> {
  const demo = spawnSlotfeed(['demo'], {
    SLOTFEED_DATA_DIR: dataDir,
    REDIS_PREFIX: redisPrefix,
    WEB_PORT: '0',
    LOG_LEVEL: 'warn',
    // A week of slots instead of four: fewer upstream calls, the same code paths.
    SYNC_HORIZON_DAYS: '7',
  });
  started.push(demo);
  await waitFor(
    async () => demo.output(),
    (out) => out.includes('\nfeeds ready\n') || demo.child.exitCode !== null,
    // Start, three weeks of history and the first syncs: 17 s on a quiet machine, 45 s was once too few on a
    // loaded CI box. Only a ceiling: the wait ends when the line appears.
    { timeoutMs: 120_000, intervalMs: 200, what: 'the demo to print "feeds ready"' },
  );
  expect(demo.child.exitCode).toBeNull();
  const printed = parseOutput(demo.output());
  postgresPids.push(printed.postgresPid);
  return { demo, printed };
}

async function stopWithSigint(demo: SlotfeedProcess, printed: DemoOutput): Promise<void> {
  expect(isAlive(printed.postgresPid)).toBe(true);
  demo.child.kill('SIGINT');
  const exit = await demo.exited;
  expect(exit).toEqual({ code: 0, signal: null });
  expect(demo.output()).toContain('Stopped; nothing left running.');
  expect(isAlive(printed.postgresPid)).toBe(false);
  expect(await processesMentioning(dataDir)).toEqual([]);
}

interface Counts {
  connections: number;
  activeFeeds: number;
  syncRuns: number;
  bookings: number;
  firstRun: Date;
}

async function countRows(port: number): Promise<Counts> {
  const secrets = JSON.parse(await readFile(path.join(dataDir, 'demo.json'), 'utf8')) as {
    postgresPassword: string;
  };
  const client = new pg.Client({
    connectionString: `postgresql://postgres:${secrets.postgresPassword}@127.0.0.1:${port}/slotfeed`,
  });
  await client.connect();
  try {
    const connections = await client.query<{ n: string }>('SELECT count(*) AS n FROM connection');
    const feeds = await client.query<{ n: string }>(
      'SELECT count(*) AS n FROM feed WHERE revoked_at IS NULL',
    );
    // Runs of the days before today are packed a row per connection-day (sync_run_history) once the demo's
    // retention has run: both forms count.
    const runs = await client.query<{ n: string; first: Date }>(
      `SELECT sum(n) AS n, min(first) AS first FROM (
         SELECT count(*) AS n, min(started_at) AS first FROM sync_run
         UNION ALL
         SELECT count(*), min((h.day::timestamp AT TIME ZONE 'UTC') + u.ms * interval '1 millisecond')
         FROM sync_run_history h CROSS JOIN LATERAL unnest(h.started_ms) AS u(ms)) AS both_forms`,
    );
    const bookings = await client.query<{ n: string }>('SELECT count(*) AS n FROM booking');
    return {
      connections: Number(connections.rows[0]!.n),
      activeFeeds: Number(feeds.rows[0]!.n),
      syncRuns: Number(runs.rows[0]!.n),
      bookings: Number(bookings.rows[0]!.n),
      firstRun: runs.rows[0]!.first,
    };
  } finally {
    await client.end();
  }
}

const DAY_MS = 86_400_000;

/** A report's CSV from the admin API, as rows keyed by column. */
async function reportRows(
  printed: DemoOutput,
  name: string,
  params: Record<string, string> = {},
): Promise<Record<string, string>[]> {
  const query = new URLSearchParams(params).toString();
  const response = await fetch(`${printed.adminUrl}/admin/reports/${name}/csv${query ? `?${query}` : ''}`, {
    headers: { authorization: `Bearer ${printed.adminToken}` },
  });
  expect(response.status).toBe(200);
  const [header, ...lines] = (await response.text()).split('\r\n').filter((line) => line !== '');
  const keys = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((cell, i) => [keys[i]!, cell])));
}

/** Monday of the ISO week a day 'YYYY-MM-DD' falls in. */
function weekOf(day: string): string {
  const ms = Date.parse(`${day}T00:00:00Z`);
  return new Date(ms - ((new Date(ms).getUTCDay() + 6) % 7) * DAY_MS).toISOString().slice(0, 10);
}

/** The distinct weeks of the days `rows` hold in `key`. */
const weeksIn = (rows: Record<string, string>[], key = 'day') => new Set(rows.map((r) => weekOf(r[key]!)));

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-demo-test-'));
  // Run as root, the embedded server runs as the `postgres` user, which must be able to enter this directory.
  await chmod(workDir, 0o755);
  dataDir = path.join(workDir, 'data');
});

afterAll(async () => {
  for (const demo of started) if (demo.child.exitCode === null) demo.child.kill('SIGKILL');
  for (const pid of postgresPids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  await rm(workDir, { recursive: true, force: true });
  // The demo found the machine's Redis at the default URL (or started its own, gone with it): drop its keys.
  if (await redisAnswers(DEFAULT_REDIS_URL)) {
    const redis = createRedisConnection(DEFAULT_REDIS_URL, 'command', 'demo-test-cleanup');
    const keys = await redis.keys(`${redisPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
});

let historyCounts: Counts | undefined;

describe('slotfeed demo', () => {
  let firstFeedUrl: string;

  it(
    'reaches "feeds ready", serves a valid calendar at a printed URL, and exits cleanly on SIGINT',
    async () => {
      const { demo, printed } = await startDemo();
      const out = demo.output();
      // Not a terminal: the progress comes as plain lines, one per account.
      expect(out.match(/^First sync of .+ done: \d+ free slots\.$/gm)).toHaveLength(3);
      expect(out).not.toContain('\u001b[');
      expect(printed.feeds).toHaveLength(3);
      for (const feed of printed.feeds) {
        expect(feed.https).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/feeds\/[A-Za-z0-9_-]{43}\.ics$/);
        expect(feed.webcal).toBe(feed.https.replace(/^http:/, 'webcal:'));
      }
      firstFeedUrl = printed.feeds[0]!.https;
      expect(printed.curl).toBe(`curl -fsS '${firstFeedUrl}'`);

      const feed = await fetch(firstFeedUrl);
      expect(feed.status).toBe(200);
      expect(feed.headers.get('content-type')).toMatch(/^text\/calendar/);
      const ics = await feed.text();
      assertStrictIcs(ics);
      expect(ics).toContain('BEGIN:VEVENT');

      const admin = await fetch(`${printed.adminUrl}/admin`, {
        headers: { authorization: `Bearer ${printed.adminToken}`, accept: 'text/html' },
      });
      expect(admin.status).toBe(200);
      expect(await admin.text()).toContain('<h1>Connections</h1>');

      // A history, recorded before the present through the real syncs: three weeks of runs and bookings.
      expect(out).toMatch(/^History: a fresh database, so the accounts connect 21 days back/m);
      expect(out).toMatch(/^History recorded in [\d.]+ s: 42 sync rounds of 42, \d+ simulated bookings/m);
      const counts = await countRows(printed.postgresPort);
      historyCounts = counts;
      expect(counts.syncRuns).toBeGreaterThanOrEqual(3 * 43);
      expect(Date.now() - counts.firstRun.getTime()).toBeGreaterThan(20 * DAY_MS);
      expect(counts.bookings).toBeGreaterThan(20);

      const booked = (await reportRows(printed, 'bookings', { by: 'day' })).filter(
        (r) => Number(r.bookings) > 0,
      );
      expect(weeksIn(booked).size).toBeGreaterThanOrEqual(3);
      const utilization = await reportRows(printed, 'utilization');
      expect(weeksIn(utilization).size).toBeGreaterThanOrEqual(3);
      expect(weeksIn(utilization.filter((r) => Number(r.booked_minutes) > 0)).size).toBeGreaterThanOrEqual(3);
      // Availability as it was in each of the past weeks: the slots open then, on days of that week.
      for (const weeksAgo of [3, 2, 1]) {
        const at = new Date(Date.now() - (7 * weeksAgo - 1) * DAY_MS);
        const rows = await reportRows(printed, 'availability', { at: at.toISOString() });
        expect(rows.length).toBeGreaterThan(0);
        expect(rows.some((r) => Date.parse(`${r.day!}T00:00:00Z`) < at.getTime() + 7 * DAY_MS)).toBe(true);
      }

      // The utilization chart: a point for every day, the Sundays nobody works at 0 rather than skipped.
      const page = await fetch(`${printed.adminUrl}/admin/reports/utilization`, {
        headers: { authorization: `Bearer ${printed.adminToken}`, accept: 'text/html' },
      });
      const chartJson = /<script type="application\/json" id="chart-data">([\s\S]*?)<\/script>/.exec(
        await page.text(),
      )?.[1];
      const chart = JSON.parse(chartJson ?? 'null') as { x: number[]; y: number[] } | null;
      expect(chart?.x.length).toBeGreaterThanOrEqual(18);
      expect(chart!.x.every((s, i) => i === 0 || s - chart!.x[i - 1]! === 86_400)).toBe(true);
      expect(chart!.y.filter((share) => share === 0).length).toBeGreaterThanOrEqual(2);

      await stopWithSigint(demo, printed);
    },
    patient(180_000),
  );

  it(
    'on a restart reconnects the same accounts (no duplicates) and prints the same feed URLs again',
    async () => {
      const { demo, printed } = await startDemo();
      // The owner's page shows a feed's URL again (its token is kept sealed), so nothing needs rotating.
      expect(demo.output()).not.toContain('(reconnected: new URL)');
      // The history of the first start is kept, and none is added: the reconnects' syncs and little else.
      expect(demo.output()).toContain('History: the database already holds connections; its history is kept');
      expect(demo.output()).not.toContain('History recorded');
      const counts = await countRows(printed.postgresPort);
      expect(counts).toMatchObject({ connections: 3, activeFeeds: 3, firstRun: historyCounts!.firstRun });
      expect(counts.syncRuns - historyCounts!.syncRuns).toBeLessThan(12);

      expect(new URL(printed.feeds[0]!.https).pathname).toBe(new URL(firstFeedUrl).pathname);
      const fresh = await fetch(printed.feeds[0]!.https);
      expect(fresh.status).toBe(200);
      assertStrictIcs(await fresh.text());

      await stopWithSigint(demo, printed);
    },
    patient(160_000),
  );
});
