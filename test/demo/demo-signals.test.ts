// The demo stops however it is stopped (issue 44): SIGTERM or SIGINT to npm or to the demo's own process, as an
// IDE's stop button, `timeout`, a supervisor or a script sends them, each stops all of it as Ctrl-C does; a demo
// whose parent died stops itself; a second start on the same folder says who runs there; and the servers of a
// demo killed outright are stopped by the next start, which comes back with the same CalDAV address.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isAlive, processesMentioning } from '../support/processes.js';
import { patient } from '../support/patience.js';
import { waitFor } from '../support/wait-for.js';
import {
  dropDemoRedisKeys,
  hasExited,
  makeNpmProject,
  startJob,
  untilReady,
  type ForegroundJob,
} from './helpers/demo-jobs.js';

const redisPrefix = `slotfeed-signals-test-${randomBytes(4).toString('hex')}`;
let workDir: string;
let dataDir: string;
let project: string;
const started: ForegroundJob[] = [];

function startNpmDemo(): ForegroundJob {
  const job = startJob('npm', ['run', 'demo', '--', '--accounts', '1'], project, {
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? os.homedir(),
    SLOTFEED_DATA_DIR: dataDir,
    REDIS_PREFIX: redisPrefix,
    WEB_PORT: '0',
    LOG_LEVEL: 'warn',
    SYNC_HORIZON_DAYS: '7',
  });
  started.push(job);
  return job;
}

/** The demo's own process: the pid it records in its data folder. */
async function demoPid(): Promise<number> {
  return (JSON.parse(await readFile(path.join(dataDir, 'demo.pid'), 'utf8')) as { pid: number }).pid;
}

/** Servers still running on the demo's data folder (Postgres, Radicale), and the demo itself if alive. */
async function leftBehind(pid: number): Promise<number[]> {
  return [...(isAlive(pid) ? [pid] : []), ...(await processesMentioning(dataDir))];
}

const caldavPort = (stdout: string) =>
  /^CalDAV: \w+ started \(pid \d+, http:\/\/127\.0\.0\.1:(\d+)\//m.exec(stdout)?.[1];
const calendarLine = (stdout: string) => /^ {2}calendar: (.*)$/m.exec(stdout)?.[1];

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-signals-'));
  // Run as root, the embedded server runs as the `postgres` user, which must be able to enter this directory.
  await chmod(workDir, 0o755);
  dataDir = path.join(workDir, 'data');
  project = await makeNpmProject(workDir);
});

afterAll(async () => {
  for (const job of started) if (!hasExited(job)) process.kill(-job.child.pid!, 'SIGKILL');
  for (const pid of await processesMentioning(dataDir)) process.kill(pid, 'SIGKILL');
  await rm(workDir, { recursive: true, force: true });
  await dropDemoRedisKeys(redisPrefix);
});

describe('stopping `npm run demo`', () => {
  it(
    'SIGTERM or SIGINT to npm or to the demo stops all of it, as Ctrl-C does',
    async () => {
      const cases = [
        ['npm', 'SIGTERM'],
        ['npm', 'SIGINT'],
        ['demo', 'SIGTERM'],
        ['demo', 'SIGINT'],
      ] as const;
      const endings = [];
      for (const [target, signal] of cases) {
        const npm = startNpmDemo();
        await untilReady(npm);
        const pid = await demoPid();
        process.kill(target === 'npm' ? npm.child.pid! : pid, signal);
        const exit = await npm.closed;
        // npm waits for its child; a demo left without it would still hold its servers.
        endings.push({
          target,
          signal,
          exit,
          saidStopped: npm.stdout().includes('\nStopped; nothing left running.\n'),
          left: await leftBehind(pid),
        });
      }
      expect(endings).toEqual(
        cases.map(([target, signal]) => ({
          target,
          signal,
          exit: { code: 0, signal: null },
          saidStopped: true,
          left: [],
        })),
      );
    },
    patient(480_000),
  );

  it(
    'a demo whose npm was killed outright stops itself',
    async () => {
      const npm = startNpmDemo();
      await untilReady(npm);
      const pid = await demoPid();
      process.kill(npm.child.pid!, 'SIGKILL');
      await waitFor(
        () => leftBehind(pid),
        (left) => left.length === 0,
        {
          timeoutMs: 30_000,
          what: 'the orphaned demo and its servers to stop',
        },
      );
      // Its output still reached the pipe it inherited.
      await waitFor(
        async () => npm.stdout(),
        (out) => out.includes('\nStopped; nothing left running.\n'),
        {
          what: 'the orphaned demo to say it stopped',
        },
      );
    },
    patient(180_000),
  );

  it(
    'a second start says which demo runs there; after a demo killed outright, the next one stops its servers and keeps its CalDAV address',
    async () => {
      const first = startNpmDemo();
      await untilReady(first);
      const pid = await demoPid();
      const webUrl = /^slotfeed: web on (http:\/\/127\.0\.0\.1:\d+),/m.exec(first.stdout())?.[1];
      expect(webUrl).toBeDefined();

      const second = startNpmDemo();
      expect((await second.closed).code).toBe(1);
      expect(second.stderr()).toContain(
        `A slotfeed demo is already running on this data folder (pid ${pid}, web on ${webUrl}, data in ${dataDir}). ` +
          `Stop it with Ctrl-C in its terminal, or \`kill ${pid}\``,
      );
      expect(isAlive(pid)).toBe(true);

      // Killed outright: its Postgres and Radicale run on, in process groups of their own.
      process.kill(pid, 'SIGKILL');
      await first.closed;
      const orphans = await processesMentioning(dataDir);
      expect(orphans.length).toBeGreaterThan(0);

      const third = startNpmDemo();
      await untilReady(third);
      expect(third.stdout()).toMatch(
        /^An earlier demo on this folder ended without stopping its servers: stopped .*postgres \(pid \d+\)/m,
      );
      expect(orphans.filter(isAlive)).toEqual([]);
      expect(caldavPort(third.stdout())).toBe(caldavPort(first.stdout()));
      expect(calendarLine(third.stdout())).toBe(calendarLine(first.stdout()));

      process.kill(third.child.pid!, 'SIGTERM');
      expect((await third.closed).code).toBe(0);
    },
    patient(300_000),
  );
});
