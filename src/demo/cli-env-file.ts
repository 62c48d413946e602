// `.slotfeed/demo.env`: what the CLI needs to reach the running demo (its database, its Redis and key prefix,
// the base of its feed links), in the dotenv format Node reads with `node --env-file=.slotfeed/demo.env`.
// The demo picks ports and a database password at run time, so without this file every CLI command would
// need them typed in by hand. It holds the database password: owner-only, like demo.json, and removed when
// the demo stops (a stale one would point the CLI at servers that are gone).
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { shellQuote } from './demo-summary.js';

export interface CliEnvironment {
  DATABASE_URL: string;
  REDIS_URL: string;
  REDIS_PREFIX: string;
  PUBLIC_BASE_URL: string;
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
    '# this demo. Use it with Node: variables already set in your shell take precedence over these.',
    `#   ${usage}`,
    ...Object.entries(environment).map(([name, value]) => `${name}=${envFileValue(name, value)}`),
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
function fromCwd(file: string, cwd: string): string {
  const relative = path.relative(cwd, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

/** The command that runs the CLI with the env file, e.g. `node --env-file=.slotfeed/demo.env dist/cli.js`. */
export function cliInvocation(input: { envFile: string; cliScript: string; cwd: string }): string {
  return [
    'node',
    `--env-file=${shellWord(fromCwd(input.envFile, input.cwd))}`,
    shellWord(fromCwd(input.cliScript, input.cwd)),
  ].join(' ');
}
