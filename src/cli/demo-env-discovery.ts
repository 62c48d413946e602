// The CLI finds a running demo by itself: run from the directory that holds the demo's data directory
// (`.slotfeed/`, or wherever SLOTFEED_DATA_DIR points), it reads `demo.env` (demo/cli-env-file.ts) under the
// variables of the caller's shell, as `node --env-file` would, so `node dist/cli.js connections list` reaches
// the demo with nothing to paste. Only the commands that operate an installation read it: a daemon role
// started here must never attach itself to a demo by accident, and a shell whose DATABASE_URL names another
// database (production's, say) gets none of the demo's settings: its token key, Redis prefix and loopback
// allowances would otherwise be mixed with that database, sealing secrets with a key it cannot open.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { CLI_ENV_FILE_NAME, DEFAULT_DATA_DIR_NAME, fromCwd } from '../demo/cli-env-file.js';

type Env = Record<string, string | undefined>;

/** Commands that run a process of their own (or start a demo): they never read a demo's settings. */
const RUNS_ITS_OWN = new Set(['demo', 'start', 'worker', 'web', 'scheduler', 'simulator', 'help']);

export interface DemoEnvLookup {
  env: Env;
  /** One line for stderr when the demo's settings were used or a leftover file was ignored. */
  note?: string;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (thrown: unknown) {
    // EPERM: it runs, as another user.
    return (thrown as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function demoEnvFileFor(env: Env, cwd: string): string {
  const dataDir = env.SLOTFEED_DATA_DIR
    ? path.resolve(cwd, env.SLOTFEED_DATA_DIR)
    : path.join(cwd, DEFAULT_DATA_DIR_NAME);
  return path.join(dataDir, CLI_ENV_FILE_NAME);
}

/** The server and database a Postgres URL names (user and password aside), or the URL itself if it is none. */
function databaseNamed(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return url;
  }
}

/**
 * `env` with a running demo's settings under it, when `argv` names an operator command and the demo's env file
 * is there; else `env` unchanged. A file whose demo is no longer running (killed before it could remove it)
 * is ignored, with a note; so is the whole file when the shell's DATABASE_URL names a database other than the
 * demo's.
 */
export function withRunningDemo(
  argv: readonly string[],
  env: Env,
  cwd: string,
  running: (pid: number) => boolean = isRunning,
): DemoEnvLookup {
  const command = argv.find((arg) => !arg.startsWith('-'));
  if (command === undefined || RUNS_ITS_OWN.has(command)) return { env };
  const file = demoEnvFileFor(env, cwd);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { env };
  }
  const fromFile = parseEnv(text);
  // Relative to here when it is below here; a folder elsewhere (SLOTFEED_DATA_DIR) by its own path, not by ../..
  const shown = fromCwd(file, cwd);
  const pid = Number(fromFile.SLOTFEED_DEMO_PID);
  if (!Number.isInteger(pid) || pid <= 0 || !running(pid)) {
    return {
      env,
      note: `slotfeed: ignoring ${shown}: the demo that wrote it (pid ${fromFile.SLOTFEED_DEMO_PID ?? '?'}) is no longer running`,
    };
  }
  if (
    env.DATABASE_URL &&
    fromFile.DATABASE_URL &&
    databaseNamed(env.DATABASE_URL) !== databaseNamed(fromFile.DATABASE_URL)
  ) {
    return {
      env,
      note: `slotfeed: not reading ${shown}: DATABASE_URL names another database than the running demo's`,
    };
  }
  const { SLOTFEED_DEMO_PID: _pid, ...settings } = fromFile;
  return { env: { ...settings, ...env }, note: `slotfeed: using the running demo (${shown})` };
}
