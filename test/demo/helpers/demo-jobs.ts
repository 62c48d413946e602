// The demo as a person runs it from a terminal, for the tests that stop it: a foreground job (the leader of a
// process group of its own), `npm run demo` through package.json's script as it is, and what a stop leaves.
import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from '@jest/globals';
import { DEFAULT_REDIS_URL, redisAnswers } from '../../../src/demo/local-redis.js';
import { createRedisConnection } from '../../../src/lib/redis-connection.js';
import { waitFor } from '../../support/wait-for.js';

export const projectRoot = fileURLToPath(new URL('../../..', import.meta.url));

export interface ForegroundJob {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Once the process has exited and its output has been read to the end. */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Started as a shell starts a foreground job: the leader of a process group of its own. */
export function startJob(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): ForegroundJob {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, closed };
}

export function hasExited(job: ForegroundJob): boolean {
  return job.child.exitCode !== null || job.child.signalCode !== null;
}

/** The pids of the servers the demo says it started (Postgres, and redis-server when it started one). */
export function startedServers(stdout: string): number[] {
  const postgres = /^Postgres: embedded \(pid (\d+),/m.exec(stdout);
  const redis = /^Redis: redis-server started \(pid (\d+),/m.exec(stdout);
  return [postgres, redis].flatMap((match) => (match ? [Number(match[1])] : []));
}

/** Lines of stderr that a person would read as trouble: anything but a JSON log line below error (50). */
export function unexpectedStderr(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '')
    .filter((line) => {
      try {
        const { level } = JSON.parse(line) as { level?: unknown };
        return typeof level !== 'number' || level >= 50;
      } catch {
        return true;
      }
    })
    .map((line) => line.slice(0, 300));
}

/** Waits for "feeds ready" (a ceiling only: a first start records a history); throws when the demo ended. */
export async function untilReady(job: ForegroundJob): Promise<void> {
  await waitFor(
    async () => job.stdout(),
    (out) => out.includes('\nfeeds ready\n') || hasExited(job),
    { timeoutMs: 120_000, intervalMs: 100, what: 'the demo to print "feeds ready"' },
  );
  if (!job.stdout().includes('\nfeeds ready\n')) {
    throw new Error(`the demo did not get ready:\n${job.stdout()}\n${job.stderr()}`);
  }
}

/**
 * A project of the test's own with package.json's "demo" script as it is, whose build does nothing and whose
 * dist/cli.js runs the sources through tsx: the test checks the code under test, and builds nothing.
 */
export async function makeNpmProject(dir: string): Promise<string> {
  const project = path.join(dir, 'project');
  await mkdir(path.join(project, 'dist'), { recursive: true });
  const { scripts } = JSON.parse(await readFile(path.join(projectRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  expect(scripts.demo).toMatch(/^node scripts\/build-if-stale\.mjs && /);
  await mkdir(path.join(project, 'scripts'));
  await writeFile(path.join(project, 'scripts', 'build-if-stale.mjs'), '// This test builds nothing.\n');
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'demo-test', private: true, type: 'module', scripts: { demo: scripts.demo } }),
  );
  const tsxApi = path.join(projectRoot, 'node_modules', 'tsx', 'dist', 'esm', 'api', 'index.mjs');
  await access(tsxApi);
  await writeFile(
    path.join(project, 'dist', 'cli.js'),
    [
      `import { register } from ${JSON.stringify(pathToFileURL(tsxApi).href)};`,
      'register();',
      `await import(${JSON.stringify(pathToFileURL(path.join(projectRoot, 'src', 'cli.ts')).href)});`,
      '',
    ].join('\n'),
  );
  return project;
}

/** The demo found the machine's Redis at the default URL (or started its own, gone with it): drops its keys. */
export async function dropDemoRedisKeys(prefix: string): Promise<void> {
  if (!(await redisAnswers(DEFAULT_REDIS_URL))) return;
  const redis = createRedisConnection(DEFAULT_REDIS_URL, 'command', 'demo-test-cleanup');
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}
