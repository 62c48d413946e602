// `.slotfeed/demo.env`: what the CLI needs to reach the running demo (its database, its Redis and key prefix,
// the base of its feed links, the key its tokens are sealed with, and that webhook targets on this machine are
// allowed), in the dotenv format Node's parseEnv reads. The demo picks ports and a database password at run
// time, so without this file every CLI command would need them typed in by hand; the CLI reads it by itself
// (cli/demo-env-discovery.ts) when run from the directory the data directory is in. It holds the database
// password and the token key: owner-only, like demo.json, and removed when the demo stops (a stale one would
// point the CLI at servers that are gone; the demo's pid in it lets the CLI tell when that happened anyway).
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { shellQuote } from './demo-summary.js';

export interface CliEnvironment {
  DATABASE_URL: string;
  REDIS_URL: string;
  REDIS_PREFIX: string;
  PUBLIC_BASE_URL: string;
  /** Without it the CLI could not seal a new feed's token for its owner's page, nor a webhook's secret. */
  TOKEN_ENCRYPTION_KEY: string;
  /** The demo allows webhook receivers on loopback; so must the CLI that registers them. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true';
  /** The demo's CalDAV server is on loopback; a destination the CLI adds there must be allowed too. */
  CALDAV_ALLOW_PRIVATE_TARGETS?: 'true';
  /** The demo's process: while it is gone, the file is a leftover of a demo that was killed. */
  SLOTFEED_DEMO_PID: string;
  /** The simulator's origin, for the person trying its control API (/__sim/); the CLI does not read it. */
  SIMULATOR_URL: string;
}

/** A value as Node's env-file parser reads it back unchanged: bare when plain, else single-quoted. */
function envFileValue(name: string, value: string): string {
  if (/^[\w.:/@%+,=?&~-]*$/.test(value)) return value;
  if (!/['\n\r]/.test(value)) return `'${value}'`;
  throw new Error(`${name} cannot be written to an env file: it contains a quote or a line break`);
}

export function cliEnvFileText(environment: CliEnvironment, usage: string): string {
  return [
    '# Written by `slotfeed demo` while it runs, and removed when it stops: the settings the CLI needs to reach',
    '# this demo. The CLI reads it by itself when run from the directory that holds this data directory;',
    '# variables already set in your shell take precedence over these.',
    `#   ${usage}`,
    ...Object.entries(environment).map(([name, value]) => `${name}=${envFileValue(name, value as string)}`),
    '',
  ].join('\n');
}

/** Written aside and renamed, owner-only from the start, so no reader ever sees it half-written or open. */
export async function writeCliEnvFile(file: string, text: string): Promise<void> {
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, text, { mode: 0o600 });
  await rename(partial, file);
}

export async function removeCliEnvFile(file: string): Promise<void> {
  await rm(file, { force: true });
}

const shellWord = (word: string) => (/^[\w./=:@%+,-]+$/.test(word) ? word : shellQuote(word));

/** A path as typed from `cwd`: relative when it lies below it, absolute otherwise. */
export function fromCwd(file: string, cwd: string): string {
  const relative = path.relative(cwd, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

/**
 * The command that runs the CLI against the demo from `cwd`: `node dist/cli.js` when the CLI finds the data
 * directory there by itself (`<cwd>/.slotfeed`), else with SLOTFEED_DATA_DIR naming it.
 */
export function cliInvocation(input: { dataDir: string; cliScript: string; cwd: string }): string {
  const foundByItself = path.resolve(input.cwd, DEFAULT_DATA_DIR_NAME) === path.resolve(input.dataDir);
  return [
    ...(foundByItself ? [] : [`SLOTFEED_DATA_DIR=${shellWord(input.dataDir)}`]),
    'node',
    shellWord(fromCwd(input.cliScript, input.cwd)),
  ].join(' ');
}

/** The data directory's name below the project when SLOTFEED_DATA_DIR does not move it. */
export const DEFAULT_DATA_DIR_NAME = '.slotfeed';
/** The file's name in the data directory. */
export const CLI_ENV_FILE_NAME = 'demo.env';
