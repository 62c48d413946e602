// The README's first hour, run as written on a fresh copy: a demo started as `npm run demo` starts it, in a
// scratch directory holding what a clone holds that the steps use (dist/cli.js, scripts/, node_modules) and no
// `.slotfeed/`; the README's block runs there in `sh -e`, with nothing but PATH in its environment: the CLI
// finds the demo by itself, makes a feed and a webhook to a loopback receiver that verifies each signature, a
// booking is made through the simulator's documented control API, and the receiver hears of it. Then the demo
// is stopped with Ctrl-C's signal and started again: the same feed URLs, the booking still there, and nothing
// but JSON log lines on stderr either time. The scratch directory's dist/cli.js runs the sources through tsx, so
// the test needs no build and checks the code under test rather than whatever dist/ last held.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, chmod, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEFAULT_REDIS_URL, redisAnswers } from '../../src/demo/local-redis.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { waitFor } from '../support/wait-for.js';
import { readmeDemoSample, sampleLinesMissingFrom } from './helpers/readme-sample.js';
import { patient } from '../support/patience.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const redisPrefix = `slotfeed-first-hour-test-${randomBytes(4).toString('hex')}`;
let workDir: string;
let running: Demo | undefined;

/** The ```sh block after the marker `<!-- first-hour -->` in the README. */
export function firstHourBlock(readme: string): string {
  const marker = readme.indexOf('<!-- first-hour -->');
  if (marker < 0) throw new Error('README.md has no <!-- first-hour --> block');
  const start = readme.indexOf('```sh\n', marker);
  const end = readme.indexOf('\n```\n', start);
  if (start < 0 || end < 0)
    throw new Error('the <!-- first-hour --> marker is not followed by a ```sh block');
  return readme.slice(start + '```sh\n'.length, end + 1);
}

interface Demo {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `node dist/cli.js demo` from the copy, as `npm run demo` runs it there. */
function startDemo(): Demo {
  const child = spawn(process.execPath, ['dist/cli.js', 'demo'], {
    cwd: workDir,
    // The demo's own choices (its port above all) are the ones under test: only what keeps this test apart
    // from others running at the same time (its Redis keys) and a shorter horizon are set, and the data
    // directory, which would otherwise be the one of the checkout the sources are in, where it is `.slotfeed/`
    // of this copy, as in a clone.
    env: {
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      SLOTFEED_DATA_DIR: path.join(workDir, '.slotfeed'),
      REDIS_PREFIX: redisPrefix,
      SYNC_HORIZON_DAYS: '7',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function untilFeedsReady(demo: Demo): Promise<string> {
  await waitFor(
    async () => demo.stdout(),
    (out) => out.includes('\nfeeds ready\n') || demo.child.exitCode !== null,
    { timeoutMs: 150_000, intervalMs: 200, what: 'the demo to print "feeds ready"' },
  );
  if (demo.child.exitCode !== null) {
    throw new Error(`the demo exited (${demo.child.exitCode}):\n${demo.stdout()}\n${demo.stderr()}`);
  }
  return demo.stdout();
}

async function stopDemo(demo: Demo): Promise<void> {
  demo.child.kill('SIGINT');
  expect(await demo.exited).toEqual({ code: 0, signal: null });
  expect(demo.stdout()).toContain('Stopped; nothing left running.');
}

/** Lines on stderr that are not a JSON log line. */
function nonJsonLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '')
    .filter((line) => {
      try {
        return typeof JSON.parse(line) !== 'object';
      } catch {
        return true;
      }
    });
}

const feedUrlsOf = (printed: string) => [...printed.matchAll(/^ {4}feed: {3}(\S+)$/gm)].map((m) => m[1]);

function runShell(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-e', '-x', '-c', script], {
      cwd: workDir,
      // PATH only: a DATABASE_URL or REDIS_PREFIX of the machine running the tests would win over the demo's.
      env: { PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function simulatorUrl(): Promise<string> {
  const env = parseEnv(await readFile(path.join(workDir, '.slotfeed', 'demo.env'), 'utf8'));
  expect(env.SIMULATOR_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  return env.SIMULATOR_URL!;
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-first-hour-'));
  // Run as root, the embedded server runs as the `postgres` user, which must be able to enter this directory.
  await chmod(workDir, 0o755);
  await mkdir(path.join(workDir, 'dist'));
  await cp(path.join(projectRoot, 'scripts'), path.join(workDir, 'scripts'), { recursive: true });
  await symlink(path.join(projectRoot, 'node_modules'), path.join(workDir, 'node_modules'));
  const tsxApi = path.join(projectRoot, 'node_modules', 'tsx', 'dist', 'esm', 'api', 'index.mjs');
  await access(tsxApi);
  await writeFile(
    path.join(workDir, 'dist', 'cli.js'),
    [
      `import { register } from ${JSON.stringify(pathToFileURL(tsxApi).href)};`,
      'register();',
      `await import(${JSON.stringify(pathToFileURL(path.join(projectRoot, 'src', 'cli.ts')).href)});`,
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  if (running && running.child.exitCode === null && running.child.signalCode === null) {
    running.child.kill('SIGINT');
    await Promise.race([running.exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    if (running.child.exitCode === null) running.child.kill('SIGKILL');
  }
  await rm(workDir, { recursive: true, force: true });
  if (await redisAnswers(DEFAULT_REDIS_URL)) {
    const redis = createRedisConnection(DEFAULT_REDIS_URL, 'command', 'first-hour-test-cleanup');
    const keys = await redis.keys(`${redisPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
});

describe("the README's first hour on a fresh copy", () => {
  it(
    'CLI, feed, signed webhook to a loopback receiver, a booking; then a restart keeps URLs and booking',
    async () => {
      const block = firstHourBlock(await readFile(path.join(projectRoot, 'README.md'), 'utf8'));
      // The CLI finds the demo by itself: nothing in the block points it there.
      expect(block).not.toContain('--env-file');
      expect(block).not.toMatch(/DATABASE_URL|REDIS_URL|TOKEN_ENCRYPTION_KEY|WEBHOOK_ALLOW_PRIVATE_TARGETS/);

      running = startDemo();
      const first = await untilFeedsReady(running);
      expect(first).toContain('\n  node dist/cli.js connections list\n');
      const feedUrls = feedUrlsOf(first);
      expect(feedUrls).toHaveLength(3);
      // The README's sample of this output is today's: each of its lines, in order, is shaped as one of these.
      const readme = await readFile(path.join(projectRoot, 'README.md'), 'utf8');
      expect(sampleLinesMissingFrom(readmeDemoSample(readme), first)).toEqual([]);

      const { code, stdout, stderr } = await runShell(block);
      if (code !== 0) throw new Error(`the first hour failed (exit ${code}):\n${stdout}\n${stderr}`);
      for (const email of ['linus.turing', 'grace.johnson', 'ada.knuth']) {
        expect(stdout).toContain(`${email}@example.test`);
      }
      // The feed the CLI made is served, and its owner's page can show its address again.
      const feedUrl = /^ {2}(http:\/\/\S+\/feeds\/[A-Za-z0-9_-]{43}\.ics)$/m.exec(stdout)?.[1];
      expect(feedUrl).toBeDefined();
      expect((await fetch(feedUrl!)).status).toBe(200);
      const feedId = /^Feed ([0-9a-f-]{36}) /m.exec(stdout)?.[1];
      const listed = await runShell('node dist/cli.js feeds list --format json');
      const { feeds } = JSON.parse(listed.stdout) as { feeds: { id: string; tokenRecoverable: boolean }[] };
      expect(feeds.find((f) => f.id === feedId)).toMatchObject({ tokenRecoverable: true });
      // The receiver listened before the booking was made, verified both deliveries of the booking (the slot
      // closed, the booking inferred), and stopped; the webhook was deleted, so nothing is left retrying.
      const booked = /^the slot at (\S+) closed$/m.exec(stdout)?.[1];
      expect(booked).toBeDefined();
      expect(stdout).toContain(`\nthe booking at ${booked} was inferred\n`);
      expect(stdout).toMatch(/^all of the booking is in; stopping$/m);
      expect(stdout).toMatch(/^verified msg_\S+: availability\.changed #\d+ /m);
      expect(stdout).toMatch(/^verified msg_\S+: booking\.inferred$/m);
      expect(stdout.indexOf('webhook receiver listening on')).toBeLessThan(stdout.indexOf('{"booked":true}'));
      expect(stdout).not.toContain('rejected:');
      const hooks = await runShell('node dist/cli.js webhooks list --format json');
      expect(JSON.parse(hooks.stdout)).toMatchObject({ endpoints: [] });
      expect(nonJsonLines(running.stderr())).toEqual([]);

      await stopDemo(running);
      await expect(access(path.join(workDir, '.slotfeed', 'demo.env'))).rejects.toThrow();

      running = startDemo();
      const second = await untilFeedsReady(running);
      expect(second).not.toContain('!! Port');
      expect(feedUrlsOf(second)).toEqual(feedUrls);
      // The booking is still the simulator's: its slot is not offered, and it is in its bookings.
      const sim = await simulatorUrl();
      const users = (await (await fetch(`${sim}/__sim/users`)).json()) as {
        bookings: { event_id: string; start: string }[];
      }[];
      const booking = users
        .flatMap((u) => u.bookings)
        .find((b) => Date.parse(b.start) === Date.parse(booked!));
      expect(booking).toBeDefined();
      const to = new Date(Date.parse(booked!) + 60_000).toISOString();
      const offered = (await (
        await fetch(`${sim}/__sim/slots?eventId=${booking!.event_id}&from=${booked}&to=${to}`)
      ).json()) as string[];
      expect(offered).toEqual([]);
      expect(nonJsonLines(running.stderr())).toEqual([]);
      await stopDemo(running);
    },
    patient(400_000),
  );
});
