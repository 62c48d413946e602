// Ctrl-C during the demo's first history, and the run after it: the history was left half done (a stop at
// "11 sync rounds of 42" used to be kept as it was for good, every later run saying the history is kept and
// adding none); now the stop says the next run finishes it, and the next run records the rest from where it
// stopped, up to the present. Its output is not a terminal, so the history's progress comes as whole lines.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEFAULT_REDIS_URL, redisAnswers } from '../../src/demo/local-redis.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { spawnSlotfeed, type SlotfeedProcess } from '../support/child-process.js';
import { patient } from '../support/patience.js';
import { isAlive } from '../support/processes.js';
import { waitFor } from '../support/wait-for.js';

let workDir: string;
let dataDir: string;
const redisPrefix = `slotfeed-history-resume-test-${randomBytes(4).toString('hex')}`;
const started: SlotfeedProcess[] = [];

function startDemo(): SlotfeedProcess {
  const demo = spawnSlotfeed(['demo', '--accounts', '1'], {
    SLOTFEED_DATA_DIR: dataDir,
    REDIS_PREFIX: redisPrefix,
    WEB_PORT: '0',
    LOG_LEVEL: 'warn',
    SYNC_HORIZON_DAYS: '7',
  });
  started.push(demo);
  return demo;
}

const until = (demo: SlotfeedProcess, text: string, quietMs: number) =>
  waitFor(
    async () => demo.output(),
    (out) => out.includes(text) || demo.child.exitCode !== null,
    { timeoutMs: quietMs, intervalMs: 50, what: `the demo to print ${JSON.stringify(text)}` },
  );

async function stop(demo: SlotfeedProcess): Promise<string> {
  demo.child.kill('SIGINT');
  expect(await demo.exited).toEqual({ code: 0, signal: null });
  return demo.output();
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-history-resume-'));
  // Run as root, the embedded server runs as the `postgres` user, which must be able to enter this directory.
  await chmod(workDir, 0o755);
  dataDir = path.join(workDir, 'data');
});

afterAll(async () => {
  for (const demo of started) if (demo.child.pid && isAlive(demo.child.pid)) demo.child.kill('SIGKILL');
  await rm(workDir, { recursive: true, force: true });
  if (await redisAnswers(DEFAULT_REDIS_URL)) {
    const redis = createRedisConnection(DEFAULT_REDIS_URL, 'command', 'history-resume-test-cleanup');
    const keys = await redis.keys(`${redisPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
});

describe('Ctrl-C during the demo’s first history', () => {
  let stoppedAfter: number;
  let total: number;

  it(
    'stops cleanly, saying how far the history got and that the next run finishes it',
    async () => {
      const demo = startDemo();
      // The first progress line comes with the history's second round: stop there, half way at most.
      await until(demo, 'Recording the history: ', 60_000);
      const out = await stop(demo);
      expect(out).toMatch(
        /^Recording the history: \d{4}-\d{2}-\d{2} \(sync round \d+ of 42\), \d+ s so far$/m,
      );
      const recorded = /^History recorded in [\d.]+ s: (\d+) sync rounds of (\d+),/m.exec(out);
      expect(recorded).not.toBeNull();
      stoppedAfter = Number(recorded![1]);
      total = Number(recorded![2]);
      expect(stoppedAfter).toBeLessThan(total);
      expect(out).toContain('The history is unfinished: the next run of the demo records the rest');
      expect(out).toContain('Stopped; nothing left running.');
    },
    patient(90_000),
  );

  it(
    'is finished by the next run, from where it stopped up to now',
    async () => {
      const demo = startDemo();
      await until(demo, '\nfeeds ready\n', 90_000);
      const out = demo.output();
      expect(out).toContain(
        `History: the last run stopped after ${stoppedAfter} sync rounds of ${total}; recording the rest, from `,
      );
      const recorded =
        /^History recorded in [\d.]+ s: (\d+) sync rounds of (\d+) \((\d+) in this run\),/m.exec(out);
      expect(recorded).not.toBeNull();
      expect(Number(recorded![1])).toBe(Number(recorded![2]));
      expect(Number(recorded![2])).toBeGreaterThanOrEqual(total);
      expect(Number(recorded![3])).toBe(Number(recorded![1]) - stoppedAfter);
      expect(out).not.toContain('The history is unfinished');
      await stop(demo);
    },
    patient(120_000),
  );

  it(
    'and kept as it is by the run after that',
    async () => {
      const demo = startDemo();
      await until(demo, '\nfeeds ready\n', 60_000);
      expect(demo.output()).toContain('History: the database already holds connections; its history is kept');
      expect(demo.output()).not.toContain('History recorded');
      await stop(demo);
    },
    patient(90_000),
  );
});
