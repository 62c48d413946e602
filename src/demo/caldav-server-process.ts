// A CalDAV server child process for the demo: Radicale (htpasswd users, so the demo's user and password are
// checked as a real server checks them) or Xandikos (no authentication of its own: it answers every request as
// its one user), on a loopback port, its calendars in a directory that outlives the run. Found as an executable
// on PATH (Debian's packages install /usr/bin/radicale and /usr/bin/xandikos) or as a module of the python3 on
// PATH (`pip install radicale`).
import { execFile, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { freeLoopbackPort } from './free-port.js';
import { findExecutable } from './redis-server-process.js';

export type CalDavServerKind = 'radicale' | 'xandikos';

/** How to run an installed server: its executable, or python3 with `-m <module>` first. */
export interface CalDavLauncher {
  kind: CalDavServerKind;
  command: string;
  /** Arguments before the server's own (`-m radicale` for a module). */
  prefix: string[];
}

/** Radicale first: it checks passwords, as the servers people use do. */
const KINDS: readonly CalDavServerKind[] = ['radicale', 'xandikos'];

/** Whether `python` imports `module` (one short python process; false when it cannot run). */
function pythonHasModule(python: string, module: CalDavServerKind): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ['-c', `import ${module}.__main__`], { timeout: 10_000 }, (error) => resolve(!error));
  });
}

/** The CalDAV server to run, or null when none is installed. */
export async function findCalDavServer(
  pathEnv: string | undefined,
  hasModule: (python: string, module: CalDavServerKind) => Promise<boolean> = pythonHasModule,
): Promise<CalDavLauncher | null> {
  for (const kind of KINDS) {
    const executable = findExecutable(kind, pathEnv);
    if (executable !== null) return { kind, command: executable, prefix: [] };
  }
  const python = findExecutable('python3', pathEnv);
  if (python === null) return null;
  for (const kind of KINDS) {
    if (await hasModule(python, kind)) return { kind, command: python, prefix: ['-m', kind] };
  }
  return null;
}

export interface RunningCalDavServer {
  kind: CalDavServerKind;
  /** The server's root, e.g. http://127.0.0.1:5232/: what a CalDAV client is given as the server. */
  baseUrl: string;
  port: number;
  pid: number;
  /** False for Xandikos: any user name and password are let in. */
  checksPasswords: boolean;
  /** SIGTERM (SIGKILL after 5 s), then resolves once the process has exited. Safe to call twice. */
  stop(): Promise<void>;
}

export interface CalDavServerInput {
  launcher: CalDavLauncher;
  /** Where its configuration and calendars are kept (made when missing). */
  dir: string;
  /** Tried first (the port of the last run, so the calendar's URL stays the same); else a free one. */
  preferredPort?: number;
  username: string;
  password: string;
}

const START_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;

/** The server's command line on `port`, its configuration written to `dir`. */
async function argumentsFor(input: CalDavServerInput, port: number): Promise<string[]> {
  if (input.launcher.kind === 'xandikos') {
    // --defaults makes the principal /user/ with a calendar home /user/calendars/ on the first start.
    return ['--defaults', '-d', path.join(input.dir, 'xandikos'), '-l', '127.0.0.1', '-p', String(port)];
  }
  const users = path.join(input.dir, 'users');
  const config = path.join(input.dir, 'config');
  // Plain: Radicale's hashed formats need python modules Debian's package does not pull in; the file is
  // owner-only in the demo's data directory, beside demo.json, which holds the same password.
  await writeFile(users, `${input.username}:${input.password}\n`, { mode: 0o600 });
  await writeFile(
    config,
    [
      '[server]',
      `hosts = 127.0.0.1:${port}`,
      '[auth]',
      'type = htpasswd',
      `htpasswd_filename = ${users}`,
      'htpasswd_encryption = plain',
      '[rights]',
      'type = owner_only',
      '[storage]',
      `filesystem_folder = ${path.join(input.dir, 'collections')}`,
      '[logging]',
      'level = warning',
      'mask_passwords = True',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return ['--config', config];
}

/** Resolves once an HTTP request to `url` gets any answer, or with why the process ended first. */
async function untilAnswering(
  url: string,
  exited: () => string | undefined,
): Promise<{ ok: true } | { ok: false; why: string }> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const end = exited();
    if (end !== undefined) return { ok: false, why: end };
    try {
      const answer = await fetch(url, { method: 'OPTIONS', signal: AbortSignal.timeout(2000) });
      await answer.body?.cancel();
      return { ok: true };
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) return { ok: false, why: `no answer within ${START_TIMEOUT_MS / 1000} s` };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts the server and waits until it answers; retried on a fresh port when the preferred one is taken (or
 * taken between choosing it and binding it). Throws with the server's last output when it cannot start.
 */
export async function startCalDavServer(input: CalDavServerInput): Promise<RunningCalDavServer> {
  await mkdir(input.dir, { recursive: true, mode: 0o700 });
  for (let attempt = 1; ; attempt += 1) {
    const port = await freeLoopbackPort(attempt === 1 ? input.preferredPort : undefined);
    const args = [...input.launcher.prefix, ...(await argumentsFor(input, port))];
    const child = spawn(input.launcher.command, args, {
      cwd: input.dir,
      // A process group of its own, as redis-server-process.ts explains: a terminal's Ctrl-C must not stop it
      // while the demo's workers still push to it; the demo stops it last.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let ended: string | undefined;
    child.once('error', (error) => (ended ??= error.message));
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        ended ??= `exited with ${signal ?? `code ${code}`}`;
        resolve();
      }),
    );
    const baseUrl = `http://127.0.0.1:${port}/`;
    const ready = await untilAnswering(baseUrl, () => ended);
    if (!ready.ok || child.pid === undefined) {
      child.kill('SIGKILL');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS))]);
      if (attempt < 3 && /address already in use/i.test(output)) continue;
      const why = ready.ok ? 'no process id' : ready.why;
      throw new Error(`${input.launcher.kind} did not start (${why}):\n${output.trim().slice(-800)}`);
    }
    const pid = child.pid;
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
      kind: input.launcher.kind,
      baseUrl,
      port,
      pid,
      checksPasswords: input.launcher.kind === 'radicale',
      stop: () =>
        (stopping ??= (async () => {
          process.removeListener('exit', onExit);
          if (ended !== undefined) return;
          onExit();
          const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
          await exited;
          clearTimeout(killer);
        })()),
    };
  }
}
