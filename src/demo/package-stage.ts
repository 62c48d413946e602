// A self-contained copy of an installed package and of every package it imports, in a directory of its own.
// Self-contained is the point: a stage that linked back into the checkout it was made from (as the first
// version of this did with pg) breaks for good once that checkout is deleted or moved. Each stage records what
// it was built with, and is checked against that before every use: the packages and versions it must hold,
// where each of their imports resolves, and every file's size. One that fails is built again, aside, and swapped
// in with a rename, so no process ever sees half a stage. A stage that passes its check is never changed: a
// checkout with other versions gets a stage of its own, and a server running from the old stage keeps it.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import {
  chmod,
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';
import {
  dependencyClosure,
  findInstalledPackage,
  readPackageManifest,
  type InstalledPackage,
} from './installed-packages.js';

const MANIFEST_FILE = 'slotfeed-stage.json';
const BUILDING_PREFIX = '.building-';
const BROKEN_INFIX = '.broken-';
/** A build this old was abandoned (its process killed); a real one takes seconds. */
const ABANDONED_AFTER_MS = 60 * 60 * 1000;

const stageManifest = z.object({
  packages: z.array(
    z.object({
      name: z.string(),
      version: z.string(),
      /** The package's directory, relative to the stage. */
      path: z.string(),
      /** Each import of another package: name → that package's directory, relative to the stage. */
      dependencies: z.record(z.string(), z.string()),
    }),
  ),
  /** Every regular file (relative path, size) and symlink (relative path, target), the manifest aside. */
  files: z.array(z.tuple([z.string(), z.number()])),
  links: z.array(z.tuple([z.string(), z.string()])),
});
type StageManifest = z.infer<typeof stageManifest>;

export interface StagedPackage {
  /** The staged copy of the module that `import name` loads. */
  entryFile: string;
  stageDir: string;
  /** Why the stage was built just now; null when a stage in place passed its check and was used as it was. */
  builtBecause: string | null;
}

export interface StageInput {
  /** The package to stage, as `import name` from `from` finds it. */
  name: string;
  from: string;
  /** Directory that holds the stages (created when missing). */
  stagingRoot: string;
}

const idOf = (p: { name: string; version: string }) => `${p.name}@${p.version}`;

async function readStageManifest(stageDir: string): Promise<StageManifest> {
  return stageManifest.parse(JSON.parse(await readFile(path.join(stageDir, MANIFEST_FILE), 'utf8')));
}

/** Why the stage at `stageDir` cannot be used for packages `expectedIds`, or null when it can. */
export async function stageProblem(stageDir: string, expectedIds: readonly string[]): Promise<string | null> {
  if (!existsSync(stageDir)) return 'there was none';
  let manifest: StageManifest;
  try {
    manifest = await readStageManifest(stageDir);
  } catch {
    return `it has no readable ${MANIFEST_FILE} (left by an earlier slotfeed, or damaged)`;
  }
  if (manifest.packages.map(idOf).sort().join() !== [...expectedIds].sort().join()) {
    return 'it holds other packages or versions';
  }
  const realStage = realpathSync(stageDir);
  for (const entry of manifest.packages) {
    const dir = path.join(realStage, entry.path);
    const found = existsSync(path.join(dir, 'package.json')) ? readPackageManifest(dir) : null;
    if (found?.name !== entry.name || found.version !== entry.version) {
      return `${entry.path} is not ${idOf(entry)} any more`;
    }
    for (const [dependency, target] of Object.entries(entry.dependencies)) {
      const resolved = findInstalledPackage(dependency, dir);
      if (resolved !== path.join(realStage, target)) {
        return `${entry.name}'s import of ${dependency} ${resolved === null ? 'does not resolve' : `resolves to ${resolved}`}`;
      }
    }
  }
  for (const [file, size] of manifest.files) {
    const stats = await lstat(path.join(realStage, file)).catch(() => null);
    if (!stats?.isFile() || stats.size !== size) return `${file} is missing or changed`;
  }
  for (const [link, target] of manifest.links) {
    if ((await readlink(path.join(realStage, link)).catch(() => null)) !== target)
      return `${link} is missing or changed`;
  }
  return null;
}

/**
 * The top of the tree the packages were installed in: the directory above the first `node_modules` of each, in
 * common. Copied relative to it, the stage has the same nesting (pg-types' own postgres-array stays pg-types'
 * own), so imports inside it resolve as they did in the checkout.
 */
function installTreeRoot(dirs: readonly string[]): string {
  const roots = dirs.map((dir) => {
    const parts = dir.split(path.sep);
    const first = parts.indexOf('node_modules');
    return first === -1 ? parts : parts.slice(0, first);
  });
  let common = roots[0] ?? [];
  for (const parts of roots.slice(1)) {
    let same = 0;
    while (same < common.length && common[same] === parts[same]) same += 1;
    common = common.slice(0, same);
  }
  return common.join(path.sep) || path.sep;
}

/**
 * Makes every directory enterable and every file readable by all, keeping whether it is executable: the
 * stage's readers include the unprivileged user Postgres runs as, and a checkout installed under umask 077
 * would otherwise pass its owner-only modes on. Returns what the manifest records of the tree.
 */
async function openToEveryone(root: string): Promise<Pick<StageManifest, 'files' | 'links'>> {
  const files: [string, number][] = [];
  const links: [string, string][] = [];
  await chmod(root, 0o755);
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    const relative = path.relative(root, full);
    if (entry.isSymbolicLink()) {
      links.push([relative, await readlink(full)]);
      continue;
    }
    const { mode, size } = await lstat(full);
    const permissions = mode & 0o7777;
    const open = entry.isDirectory() ? permissions | 0o555 : permissions | 0o444 | (mode & 0o100 ? 0o111 : 0);
    if (open !== permissions) await chmod(full, open);
    if (entry.isFile()) files.push([relative, size]);
  }
  return { files, links };
}

/** Puts the freshly built `building` at `stageDir`, moving a broken stage there aside first. */
async function moveIntoPlace(
  building: string,
  stageDir: string,
  expectedIds: readonly string[],
): Promise<void> {
  const occupied = (thrown: unknown) =>
    ['ENOTEMPTY', 'EEXIST'].includes((thrown as NodeJS.ErrnoException).code ?? '');
  try {
    await rename(building, stageDir);
    return;
  } catch (thrown: unknown) {
    if (!occupied(thrown)) throw thrown;
  }
  // Another process may have staged the same packages meanwhile; then its stage is as good as ours.
  if ((await stageProblem(stageDir, expectedIds)) === null) return;
  const aside = `${stageDir}${BROKEN_INFIX}${randomBytes(4).toString('hex')}`;
  await rename(stageDir, aside).catch((thrown: NodeJS.ErrnoException) => {
    if (thrown.code !== 'ENOENT') throw thrown;
  });
  try {
    await rename(building, stageDir);
  } catch (thrown: unknown) {
    // A concurrent builder got there between the two renames; the caller checks what is in place.
    if (!occupied(thrown)) throw thrown;
  }
  await rm(aside, { recursive: true, force: true });
}

/** Removes what killed processes left: half-built stages, and broken ones moved aside but not yet removed. */
async function removeAbandonedBuilds(stagingRoot: string): Promise<void> {
  for (const name of await readdir(stagingRoot)) {
    if (!name.startsWith(BUILDING_PREFIX) && !name.includes(BROKEN_INFIX)) continue;
    const leftover = path.join(stagingRoot, name);
    const { mtimeMs } = await lstat(leftover);
    if (Date.now() - mtimeMs > ABANDONED_AFTER_MS) await rm(leftover, { recursive: true, force: true });
  }
}

async function buildStage(
  closure: readonly InstalledPackage[],
  stageDir: string,
  stagingRoot: string,
): Promise<void> {
  await removeAbandonedBuilds(stagingRoot);
  const building = await mkdtemp(path.join(stagingRoot, BUILDING_PREFIX));
  try {
    const treeRoot = installTreeRoot(closure.map((p) => p.dir));
    const placed = (dir: string) => path.relative(treeRoot, dir);
    for (const installed of closure) {
      // Nested node_modules hold packages of the closure (copied on their own turn) or packages it never imports.
      const nestedModules = path.join(installed.dir, 'node_modules');
      await cp(installed.dir, path.join(building, placed(installed.dir)), {
        recursive: true,
        verbatimSymlinks: true,
        filter: (source) => source !== nestedModules,
      });
    }
    const packages = closure.map((installed) => ({
      name: installed.name,
      version: installed.version,
      path: placed(installed.dir),
      dependencies: Object.fromEntries(
        Object.entries(installed.dependencies).map(([name, dir]) => [name, placed(dir)]),
      ),
    }));
    const tree = await openToEveryone(building);
    const manifest: StageManifest = { packages, ...tree };
    await writeFile(path.join(building, MANIFEST_FILE), `${JSON.stringify(manifest)}\n`, { mode: 0o644 });
    await moveIntoPlace(building, stageDir, closure.map(idOf));
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

/** The package staged under `stagingRoot` (checked, and built when missing or broken), ready to import. */
export async function stageInstalledPackage(input: StageInput): Promise<StagedPackage> {
  const from = path.resolve(input.from);
  const closure = dependencyClosure(input.name, from);
  const root = closure[0]!;
  const ids = closure.map(idOf).sort();
  const digest = createHash('sha256').update(ids.join('\n')).digest('hex').slice(0, 8);
  const stageDir = path.join(input.stagingRoot, `${input.name.replace('/', '+')}-${root.version}-${digest}`);

  const problem = await stageProblem(stageDir, ids);
  if (problem !== null) {
    await mkdir(input.stagingRoot, { recursive: true });
    await buildStage(closure, stageDir, input.stagingRoot);
    const after = await stageProblem(stageDir, ids);
    if (after !== null) throw new Error(`could not stage ${input.name} in ${stageDir}: ${after}`);
  }
  // The entry module sits where it sits in the installed package; the package itself, where the stage's
  // manifest says (a stage made from another checkout with the same versions may nest it differently).
  const entryInSource = realpathSync(createRequire(path.join(from, 'noop.js')).resolve(input.name));
  const stagedRoot = (await readStageManifest(stageDir)).packages.find((p) => idOf(p) === idOf(root))!;
  return {
    entryFile: path.join(stageDir, stagedRoot.path, path.relative(root.dir, entryInSource)),
    stageDir,
    builtBecause: problem,
  };
}
