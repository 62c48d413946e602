// `npm run demo` builds dist/ through this script, so that a re-run starts at once when nothing changed: tsc
// (tsconfig.build.json) runs only when dist/ is not up to date with what it is built from. The inputs are every
// file under the sources' directory, tsconfig.json, tsconfig.build.json and package-lock.json (which pins
// TypeScript and the type packages); their content hashes are written to dist/ after a successful build and
// compared on the next run. Hashes rather than modification times, so that a checkout or `npm ci` rewriting a
// file (prisma generate writes src/generated/ again) with the same content does not cost a build; hashing the
// ~3 MB takes a few tens of milliseconds.
//
// The build itself is incremental (tsconfig.build.json's tsBuildInfoFile, in dist/), which tsc trusts blindly:
// an output deleted by hand is not emitted again. So an output missing from dist/ means a full build, and after
// every build the outputs whose source is gone (deleted or renamed) are removed, or they would still be
// importable from dist/.
//
//   node scripts/build-if-stale.mjs [--force]    (from the project's root; --force: build even when up to date)
// Exit codes: 0 up to date or built, 1 the build failed (no fingerprint is left, so the next run builds), 2 usage.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BUILD_CONFIG = 'tsconfig.build.json';
/** Inputs besides the sources: they change what tsc emits or whether it accepts the sources. */
const CONFIG_INPUTS = ['tsconfig.json', BUILD_CONFIG, 'package-lock.json'];
const FINGERPRINT_NAME = '.build-fingerprint.json';
const FINGERPRINT_VERSION = 1;

/** Source extension → the family of outputs tsc writes for it (x.ts → x.js, x.js.map, x.d.ts, x.d.ts.map). */
const SOURCE_FAMILY = { '.ts': 'js', '.tsx': 'js', '.mts': 'mjs', '.cts': 'cjs' };
const OUTPUT_PATTERN = /^(.*)\.(?:(js|mjs|cjs)(?:\.map)?|d\.(ts|mts|cts)(?:\.map)?)$/;
const DECLARATION_FAMILY = { ts: 'js', mts: 'mjs', cts: 'cjs' };

class UsageError extends Error {}

/** Where the sources, the outputs and tsc's build info are: read from tsconfig.build.json, declared there once. */
export function readBuildLayout(root) {
  const file = path.join(root, BUILD_CONFIG);
  let options;
  try {
    options = JSON.parse(readFileSync(file, 'utf8')).compilerOptions ?? {};
  } catch (error) {
    throw new UsageError(`cannot read ${BUILD_CONFIG} as JSON: ${error.message}`);
  }
  const { rootDir, outDir, tsBuildInfoFile } = options;
  if (!rootDir || !outDir)
    throw new UsageError(`${BUILD_CONFIG} must set compilerOptions.rootDir and outDir`);
  return {
    root,
    sourceDir: path.join(root, rootDir),
    outDir: path.join(root, outDir),
    buildInfo: tsBuildInfoFile ? path.join(root, tsBuildInfoFile) : undefined,
  };
}

/** Every file below `dir`, as paths relative to it ('/'-separated); none when `dir` does not exist. */
function filesBelow(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

/** A file below the sources' directory as the fingerprint names it: relative to the root, '/'-separated. */
function sourceKey(layout, file) {
  return `${path.relative(layout.root, layout.sourceDir).split(path.sep).join('/')}/${file}`;
}

/** Content hash of every input, keyed by its path relative to the root. */
export function fingerprintInputs(root, layout) {
  const paths = [
    ...filesBelow(layout.sourceDir).map((file) => sourceKey(layout, file)),
    ...CONFIG_INPUTS.filter((file) => existsSync(path.join(root, file))),
  ].sort();
  const hashes = {};
  for (const file of paths) {
    hashes[file] = createHash('sha1')
      .update(readFileSync(path.join(root, file)))
      .digest('base64url');
  }
  return hashes;
}

function readFingerprint(file) {
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    return stored.version === FINGERPRINT_VERSION ? stored.inputs : undefined;
  } catch {
    return undefined;
  }
}

/** How long the recorded build took, in seconds; undefined when unknown. */
function readBuildSeconds(file) {
  try {
    const { buildSeconds } = JSON.parse(readFileSync(file, 'utf8'));
    return typeof buildSeconds === 'number' ? buildSeconds : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a whole build costs, for a first build: 19.7 s of CPU, 125 s wall at a load of 13 on the project's
 * 2-core VM (docs/demo.md). A build
 * prints nothing of its own until it ends, so the wait is announced with what to expect.
 */
const FIRST_BUILD_TAKES = 'about 20 s on a quiet 2-core machine (20 s of CPU), 2 minutes at a load of 13';

/** The first few paths of a list, for a one-line reason. */
function some(paths) {
  return paths.length > 1 ? `${paths[0]} and ${paths.length - 1} more` : paths[0];
}

/** What differs between the recorded build's inputs and the inputs now, or undefined when nothing does. */
function changeSince(recorded, current) {
  const changed = Object.keys(current).filter((file) => file in recorded && recorded[file] !== current[file]);
  const added = Object.keys(current).filter((file) => !(file in recorded));
  const removed = Object.keys(recorded).filter((file) => !(file in current));
  const parts = [
    changed.length > 0 && `${some(changed)} changed`,
    added.length > 0 && `${some(added)} added`,
    removed.length > 0 && `${some(removed)} removed`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : undefined;
}

function familyOfSource(file) {
  const extension = path.extname(file);
  if (/\.d\.[mc]?ts$/.test(file) || !(extension in SOURCE_FAMILY)) return undefined;
  return { stem: file.slice(0, -extension.length), family: SOURCE_FAMILY[extension] };
}

function familyOfOutput(file) {
  const match = OUTPUT_PATTERN.exec(file);
  if (!match) return undefined;
  return { stem: match[1], family: match[2] ?? DECLARATION_FAMILY[match[3]] };
}

/**
 * The JavaScript files tsc would write for the sources (type-only modules included) that are not in dist/,
 * relative to it; of the sources in `built` only, when given (a source added since has no output yet).
 */
function missingOutputs(layout, built) {
  return filesBelow(layout.sourceDir)
    .filter((file) => built === undefined || sourceKey(layout, file) in built)
    .map(familyOfSource)
    .filter((source) => source !== undefined)
    .map(({ stem, family }) => `${stem}.${family}`)
    .filter((file) => !existsSync(path.join(layout.outDir, file)));
}

/** Deletes the outputs whose source no longer exists, then the directories that leaves empty. */
export function removeOrphans(layout) {
  const sources = new Set(
    filesBelow(layout.sourceDir)
      .map(familyOfSource)
      .filter((source) => source !== undefined)
      .map(({ stem, family }) => `${stem}|${family}`),
  );
  const removed = [];
  for (const file of filesBelow(layout.outDir)) {
    const output = familyOfOutput(file);
    if (output === undefined || sources.has(`${output.stem}|${output.family}`)) continue;
    rmSync(path.join(layout.outDir, file));
    removed.push(file);
  }
  const directories = readdirSync(layout.outDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(entry.parentPath, entry.name))
    // Deepest first, so that a parent left empty by its children goes too.
    .sort((a, b) => b.length - a.length);
  for (const directory of directories) {
    if (readdirSync(directory).length === 0) rmdirSync(directory);
  }
  return removed;
}

function parseArguments(args) {
  const force = args.includes('--force');
  const unknown = args.filter((arg) => arg !== '--force');
  if (unknown.length > 0)
    throw new UsageError(`unknown argument ${unknown[0]} (usage: build-if-stale [--force])`);
  return { force };
}

/** Why a build is needed, or undefined when dist/ is up to date. */
function staleness(layout, inputs, recorded) {
  if (recorded === undefined) return 'no earlier build recorded';
  const change = changeSince(recorded, inputs);
  if (change !== undefined) return change;
  const missing = missingOutputs(layout, recorded);
  return missing.length > 0 ? `${path.basename(layout.outDir)}/${some(missing)} missing` : undefined;
}

/** Runs the project's own tsc; false when it fails or is not installed. */
function compile(root, warn) {
  let tsc;
  try {
    tsc = createRequire(path.join(root, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    warn('TypeScript is not installed here: run npm ci first');
    return false;
  }
  return spawnSync(process.execPath, [tsc, '-p', BUILD_CONFIG], { cwd: root, stdio: 'inherit' }).status === 0;
}

/** Builds when needed; returns the exit code. */
export function buildIfStale({ root, args, log = console.log, warn = console.error }) {
  let options;
  let layout;
  try {
    options = parseArguments(args);
    layout = readBuildLayout(root);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    warn(`build-if-stale: ${error.message}`);
    return 2;
  }
  const outName = path.basename(layout.outDir);
  const fingerprintFile = path.join(layout.outDir, FINGERPRINT_NAME);
  // Read before tsc starts: a file edited during the build then differs from what is recorded, and builds again.
  const inputs = fingerprintInputs(root, layout);
  const recorded = readFingerprint(fingerprintFile);
  const lastSeconds = readBuildSeconds(fingerprintFile);
  const reason = options.force ? '--force' : staleness(layout, inputs, recorded);
  if (reason === undefined) {
    log(`${outName}/ is up to date; build skipped`);
    return 0;
  }
  log(`building… (${reason})`);
  log(
    lastSeconds === undefined
      ? `  tsc compiles src/ into ${outName}/; a whole build takes ${FIRST_BUILD_TAKES}`
      : `  tsc compiles src/ into ${outName}/; the last build here took ${lastSeconds} s`,
  );
  const startedAt = performance.now();
  // Gone before tsc starts, so that a build that fails or is interrupted leaves dist/ marked stale.
  rmSync(fingerprintFile, { force: true });
  // With its build info, tsc emits only what changed since, and an output deleted by hand is not among them.
  if (layout.buildInfo && missingOutputs(layout, recorded).length > 0)
    rmSync(layout.buildInfo, { force: true });
  if (!compile(root, warn)) {
    warn(`build failed; ${outName}/ is not marked up to date, so the next run builds again`);
    return 1;
  }
  removeOrphans(layout);
  const buildSeconds = Math.round((performance.now() - startedAt) / 100) / 10;
  writeFileSync(
    fingerprintFile,
    `${JSON.stringify({ version: FINGERPRINT_VERSION, inputs, buildSeconds }, null, 1)}\n`,
  );
  log(`  built in ${buildSeconds} s`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = buildIfStale({ root: process.cwd(), args: process.argv.slice(2) });
}
