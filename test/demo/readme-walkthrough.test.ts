// The README's "The CLI and the demo" block, run as written: a demo is started as `npm run demo` starts it, with
// its data directory at `.slotfeed/` of a scratch directory, and the block runs in `sh -e` from there, with no
// other slotfeed variable in its environment. The scratch directory's `dist/cli.js` runs the sources through
// tsx, so the test needs no build and checks the code under test rather than whatever dist/ last held.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEFAULT_REDIS_URL, redisAnswers } from '../../src/demo/local-redis.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { spawnSlotfeed, type SlotfeedProcess } from '../support/child-process.js';
import { waitFor } from '../support/wait-for.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const redisPrefix = `slotfeed-walkthrough-test-${randomBytes(4).toString('hex')}`;
let workDir: string;
let dataDir: string;
let demo: SlotfeedProcess | undefined;

/** The first ```sh block after the heading "### The CLI and the demo". */
function walkthroughBlock(readme: string): string {
  const section = readme.indexOf('\n### The CLI and the demo\n');
  if (section < 0) throw new Error('README.md has no section "The CLI and the demo"');
  const start = readme.indexOf('\n```sh\n', section);
  const end = readme.indexOf('\n```\n', start + 1);
  if (start < 0 || end < 0) throw new Error('the section "The CLI and the demo" has no ```sh block');
  return readme.slice(start + '\n```sh\n'.length, end + 1);
}

function runShell(
  script: string,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // PATH only: a DATABASE_URL or REDIS_PREFIX of the machine running the tests would win over the env file.
    const child = spawn('sh', ['-e', '-x', '-c', script], {
      cwd,
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

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-walkthrough-'));
  // Run as root, the embedded server runs as the `postgres` user, which must be able to enter this directory.
  await chmod(workDir, 0o755);
  dataDir = path.join(workDir, '.slotfeed');
  await mkdir(path.join(workDir, 'dist'));
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
  if (demo && demo.child.exitCode === null && demo.child.signalCode === null) {
    demo.child.kill('SIGINT');
    await Promise.race([demo.exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (demo.child.exitCode === null) demo.child.kill('SIGKILL');
  }
  await rm(workDir, { recursive: true, force: true });
  if (await redisAnswers(DEFAULT_REDIS_URL)) {
    const redis = createRedisConnection(DEFAULT_REDIS_URL, 'command', 'walkthrough-test-cleanup');
    const keys = await redis.keys(`${redisPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
});

describe('the README walkthrough of the CLI against a running demo', () => {
  it('runs verbatim: connections, sync, a new feed served on the demo’s port, feeds list, a report', async () => {
    const block = walkthroughBlock(await readFile(path.join(projectRoot, 'README.md'), 'utf8'));
    expect(block).toContain('--env-file=.slotfeed/demo.env');

    demo = spawnSlotfeed(['demo'], {
      SLOTFEED_DATA_DIR: dataDir,
      REDIS_PREFIX: redisPrefix,
      WEB_PORT: '0',
      LOG_LEVEL: 'warn',
      SYNC_HORIZON_DAYS: '7',
    });
    const running = demo;
    await waitFor(
      async () => running.output(),
      (out) => out.includes('\nfeeds ready\n') || running.child.exitCode !== null,
      { timeoutMs: 45_000, intervalMs: 200, what: 'the demo to print "feeds ready"' },
    );
    const printed = running.output();
    expect(running.child.exitCode).toBeNull();
    const origin = /^Admin page: +(http:\/\/127\.0\.0\.1:\d+)\/admin$/m.exec(printed)?.[1];
    expect(origin).toBeDefined();

    // The one line the demo prints to use the CLI, and the file it names.
    const envFile = path.join(dataDir, 'demo.env');
    expect(printed).toContain(`\n  node --env-file=${envFile} dist/cli.js connections list\n`);
    expect((await stat(envFile)).mode & 0o777).toBe(0o600);
    expect(parseEnv(await readFile(envFile, 'utf8'))).toEqual({
      DATABASE_URL: expect.stringMatching(/^postgresql:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/slotfeed$/),
      REDIS_URL: expect.stringMatching(/^redis:\/\//),
      REDIS_PREFIX: redisPrefix,
      PUBLIC_BASE_URL: origin,
    });

    const { code, stdout, stderr } = await runShell(block, workDir);
    if (code !== 0) throw new Error(`the walkthrough failed (exit ${code}):\n${stdout}\n${stderr}`);

    for (const email of ['linus.turing', 'grace.johnson', 'ada.knuth']) {
      expect(stdout).toContain(`${email}@example.test`);
    }
    const id = /^connection {2}([0-9a-f-]{36})$/m.exec(stdout)?.[1];
    expect(id).toBeDefined();
    expect(stdout).toContain('Enqueued 1 sync job(s).\n1 completed, 0 failed\n');
    expect(stdout).not.toContain('No worker is running');

    const created = /^Feed ([0-9a-f-]{36}) \(slots, all event types, 7 days\)/m.exec(stdout);
    const feedUrl = /^ {2}(http:\/\/\S+\/feeds\/[A-Za-z0-9_-]{43}\.ics)$/m.exec(stdout)?.[1];
    expect(created).not.toBeNull();
    expect(feedUrl?.startsWith(`${origin}/feeds/`)).toBe(true);
    const feed = await fetch(feedUrl!);
    expect(feed.status).toBe(200);
    expect(await feed.text()).toContain('BEGIN:VEVENT');
    // feeds list, filtered to the connection: its default feed and the new one, with their ids whole.
    expect(stdout).toMatch(new RegExp(`^${created![1]}  ${id}  slots, all event types, 7 days`, 'm'));
    expect(stdout).toContain('Sync health');

    running.child.kill('SIGINT');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    await expect(access(envFile)).rejects.toThrow();
  }, 120_000);
});
