// Real CalDAV servers for tests, from Debian's packages: Radicale (htpasswd users in a plain-text file, storage on
// the file system) and Xandikos (git-backed, no authentication of its own: it answers every request as its one
// user, whatever the Authorization header says). Each runs on a spare loopback port with its data in a temp dir of
// its own, and can be stopped and started again on the same port and data (an outage test). CI installs the
// packages (.ci/run); without them, starting fails and says which package is missing.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freeLoopbackPort } from '../../src/demo/free-port.js';
import { patient } from './patience.js';

export type CalDavServerKind = 'radicale' | 'xandikos';

export const CALDAV_SERVER_KINDS: readonly CalDavServerKind[] = ['radicale', 'xandikos'];

export interface CalDavTestServer {
  kind: CalDavServerKind;
  /** The server's root, e.g. http://127.0.0.1:40123/: what a person would type as the server's address. */
  baseUrl: string;
  username: string;
  password: string;
  /** The calendar home its discovery leads to (current-user-principal → calendar-home-set). */
  homeUrl: string;
  /** Whether a wrong password is refused: Radicale checks, Xandikos has no authentication. */
  checksPasswords: boolean;
  /**
   * The user's password changes on the server's side (a person made a new app password): what a client still
   * holding the old one is refused from the next request on. `password` is the new one after it. Radicale only.
   */
  changePassword(): Promise<void>;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s); the data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data, and waits until it answers. */
  start(): Promise<void>;
  /** Stops it and removes its temp dir. */
  close(): Promise<void>;
  /** What the server printed, for a failing test's message. */
  output(): string;
  /** The running server's process id (a bench reads its CPU). */
  pid(): number | undefined;
}

const EXECUTABLES: Record<CalDavServerKind, string> = {
  radicale: '/usr/bin/radicale',
  xandikos: '/usr/bin/xandikos',
};

interface Launch {
  argv: string[];
  homePath: string;
  checksPasswords: boolean;
}

async function prepare(kind: CalDavServerKind, dir: string, port: number, user: string, password: string) {
  if (kind === 'radicale') {
    const users = path.join(dir, 'users');
    const config = path.join(dir, 'config');
    await writeFile(users, `${user}:${password}\n`);
    await writeFile(
      config,
      [
        '[server]',
        `hosts = 127.0.0.1:${port}`,
        '[auth]',
        'type = htpasswd',
        `htpasswd_filename = ${users}`,
        'htpasswd_encryption = plain',
        // Radicale waits this long after a wrong password by default (1 s): the credentials test needs no wait.
        'delay = 0',
        '[rights]',
        'type = owner_only',
        '[storage]',
        `filesystem_folder = ${path.join(dir, 'collections')}`,
        '[web]',
        'type = none',
        '[logging]',
        'level = warning',
        'mask_passwords = True',
        '',
      ].join('\n'),
    );
    return {
      argv: [EXECUTABLES.radicale, '--config', config],
      homePath: `/${user}/`,
      checksPasswords: true,
    } satisfies Launch;
  }
  return {
    // --defaults makes the principal /user/ with a calendar home /user/calendars/ holding one calendar.
    argv: [
      EXECUTABLES.xandikos,
      '--defaults',
      '-d',
      path.join(dir, 'data'),
      '-l',
      '127.0.0.1',
      '-p',
      String(port),
    ],
    homePath: '/user/calendars/',
    checksPasswords: false,
  } satisfies Launch;
}

/** Resolves once an HTTP request to `url` gets any answer; rejects when the process exits first. */
async function answering(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + patient(30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the server exited before it answered:\n${output().slice(-2000)}`);
    try {
      await fetch(url, { method: 'OPTIONS', signal: AbortSignal.timeout(2000) });
      return;
    } catch {
      // Not listening yet: poll again until the deadline.
    }
    if (Date.now() > deadline)
      throw new Error(`no answer from ${url} within 30 s:\n${output().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts one server of `kind` in a fresh temp dir and waits until it answers. */
export async function startCalDavServer(kind: CalDavServerKind): Promise<CalDavTestServer> {
  if (!existsSync(EXECUTABLES[kind]))
    throw new Error(`${EXECUTABLES[kind]} is missing: apt-get install ${kind} (see .ci/run)`);
  const dir = await mkdtemp(path.join(tmpdir(), `slotfeed-${kind}-`));
  const username = 'alice';
  let password = `pw-${Math.random().toString(36).slice(2)}`;
  let port = 0;
  let launch: Launch | undefined;
  let child: ChildProcess | undefined;
  let log = '';

  const spawnOn = async (chosen: number) => {
    launch = await prepare(kind, dir, chosen, username, password);
    const [command, ...args] = launch.argv;
    const started = spawn(command ?? '', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    started.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    started.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    child = started;
    await answering(`http://127.0.0.1:${chosen}/`, started, () => log);
  };

  // The port is free when chosen but another process may take it before the server binds: try a fresh one.
  for (let attempt = 1; ; attempt++) {
    port = await freeLoopbackPort();
    try {
      await spawnOn(port);
      break;
    } catch (error) {
      if (child) await exited(child);
      if (attempt >= 3) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }

  const baseUrl = `http://127.0.0.1:${port}/`;
  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    running.kill('SIGTERM');
    const killer = setTimeout(() => running.kill('SIGKILL'), 5000);
    await exited(running);
    clearTimeout(killer);
  };
  return {
    kind,
    baseUrl,
    username,
    get password() {
      return password;
    },
    homeUrl: new URL(launch?.homePath ?? '/', baseUrl).href,
    checksPasswords: launch?.checksPasswords ?? false,
    async changePassword() {
      if (kind !== 'radicale') throw new Error(`${kind} has no passwords to change`);
      password = `pw-${Math.random().toString(36).slice(2)}`;
      // Radicale reads its htpasswd file at every login: the new password holds from the next request on.
      await writeFile(path.join(dir, 'users'), `${username}:${password}\n`);
    },
    stop,
    start: async () => {
      await stop();
      await spawnOn(port);
    },
    close: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
    output: () => log,
    pid: () => child?.pid,
  };
}

export interface ReadbackEvent {
  href: string;
  uid: string;
  summary: string | null;
  /** ISO 8601, UTC as ...Z */
  dtstart: string | null;
  dtend: string | null;
  /** The VEVENT's X-SLOTFEED-FEED, or null. */
  marker: string | null;
}

const READBACK = new URL('./caldav-readback.py', import.meta.url).pathname;

/** Whose calendar is read: a test server's user, or any user and password of a server (the demo's). */
type ReadbackLogin = Pick<CalDavTestServer, 'username' | 'password'>;

function runReadback(server: ReadbackLogin, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    // Debian's Python: python3-caldav is installed for it, not for another python3 on PATH (pyenv).
    const child = spawn('/usr/bin/python3', [READBACK, ...args], {
      env: {
        PATH: process.env.PATH ?? '',
        CALDAV_USERNAME: server.username,
        CALDAV_PASSWORD: server.password,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new Error(`caldav-readback.py ${args[0]} exited ${code}:\n${stderr.slice(-2000)}`)),
    );
  });
}

/** The calendar's events as python3-caldav reads them, sorted by UID. */
export async function readBack(server: ReadbackLogin, calendarUrl: string): Promise<ReadbackEvent[]> {
  return JSON.parse(await runReadback(server, ['list', calendarUrl])) as ReadbackEvent[];
}

/** An event a person's own calendar app puts there (python3-caldav; no slotfeed marker). */
export async function addOwnEvent(
  server: CalDavTestServer,
  calendarUrl: string,
  event: { uid: string; summary: string; start: string; end: string },
): Promise<void> {
  await runReadback(server, ['add', calendarUrl, event.uid, event.summary, event.start, event.end]);
}
