// A throwaway `redis-server` child process on a free loopback port: no snapshots, no append-only file, nothing
// written to disk. The demo's and the tests' fallback when no Redis answers and one is installed.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freeLoopbackPort } from './free-port.js';

export interface RunningRedisServer {
  url: string;
  port: number;
  pid: number;
  /** SIGTERM, then resolves once the process has exited. Safe to call twice. */
  stop(): Promise<void>;
}

/** The first executable called `name` in the PATH directories, or null. */
export function findExecutable(name: string, pathEnv: string | undefined): string | null {
  for (const dir of (pathEnv ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

// Redis 6 and later log "Ready to accept connections"; older ones the same words in lower case.
const READY = /ready to accept connections/i;
const ADDRESS_IN_USE = /Address already in use/i;
const START_TIMEOUT_MS = 10_000;

type Started = { kind: 'ready'; pid: number; exited: Promise<void> } | { kind: 'failed'; output: string };

function spawnOnce(executable: string, port: number): Promise<Started> {
  const child = spawn(
    executable,
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
      // BullMQ needs keys never to be evicted.
      '--maxmemory-policy',
      'noeviction',
      '--dir',
      os.tmpdir(),
      '--daemonize',
      'no',
    ],
    {
      // A session, and so a process group, of its own: a terminal's Ctrl-C (SIGINT to its whole foreground
      // group) would otherwise shut the server down at once, while the demo is still closing the roles that
      // use it. It stops when stop() is called, or when this process exits (below).
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve({ kind: 'failed', output: `${output}\n(not ready after ${START_TIMEOUT_MS / 1000} s)` });
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (READY.test(output) && child.pid !== undefined) {
        clearTimeout(timer);
        resolve({ kind: 'ready', pid: child.pid, exited });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ kind: 'failed', output: `${output}\n${error.message}` });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ kind: 'failed', output: `${output}\n(exited with ${signal ?? `code ${code}`})` });
    });
  });
}

/** Starts redis-server on `port` (default: a free one; retried when another process takes it first). */
export async function startRedisServer(options: {
  executable: string;
  port?: number;
}): Promise<RunningRedisServer> {
  for (let attempt = 1; ; attempt += 1) {
    const port = options.port ?? (await freeLoopbackPort());
    const started = await spawnOnce(options.executable, port);
    if (started.kind === 'failed') {
      if (options.port === undefined && attempt < 3 && ADDRESS_IN_USE.test(started.output)) continue;
      throw new Error(
        `redis-server (${options.executable}) did not start:\n${started.output.trim().slice(-800)}`,
      );
    }
    const { pid, exited } = started;
    // An exit without stop() (an uncaught error, a forced exit) must not leave the server running.
    const onExit = () => {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    };
    process.once('exit', onExit);
    let stopping: Promise<void> | undefined;
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      pid,
      stop: () =>
        (stopping ??= (async () => {
          process.removeListener('exit', onExit);
          onExit();
          await exited;
        })()),
    };
  }
}
