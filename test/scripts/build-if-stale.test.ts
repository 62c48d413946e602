// scripts/build-if-stale.mjs, which `npm run demo` runs before the demo: tsc only when dist/ is behind its
// inputs. Each test runs the real script and the real tsc on a scratch project (a few lines of TypeScript and a
// tsconfig.build.json shaped like the project's), never on the checkout's dist/.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const script = path.join(projectRoot, 'scripts', 'build-if-stale.mjs');
const SKIPPED = 'dist/ is up to date; build skipped';
// A few tsc runs per test, on a machine other tests keep busy.
const TIMEOUT_MS = 90_000;

let root: string;

function write(file: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
}
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const exists = (file: string) => existsSync(path.join(root, file));

/** The scratch project's tsconfig.build.json; `incremental` as the project's own has it. */
function writeBuildConfig(options: { incremental: boolean }): void {
  const incremental = options.incremental ? { incremental: true, tsBuildInfoFile: 'dist/.tsbuildinfo' } : {};
  write(
    'tsconfig.build.json',
    JSON.stringify({
      extends: './tsconfig.json',
      compilerOptions: { rootDir: 'src', outDir: 'dist', ...incremental },
      include: ['src'],
    }),
  );
}

function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the script and returns the first line it printed (why it builds, or not), having checked it succeeded. */
function runOk(): string {
  const result = run();
  expect(result).toMatchObject({ status: 0, stderr: '' });
  return result.stdout.trim().split('\n')[0]!;
}

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'build-if-stale-'));
  // tsc is found from the project's root, as in the checkout.
  symlinkSync(path.join(projectRoot, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  write(
    'tsconfig.json',
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        types: [],
        sourceMap: true,
      },
    }),
  );
  writeBuildConfig({ incremental: false });
  write('package-lock.json', '{"lockfileVersion": 3}\n');
  write('src/greeting.ts', "export const greeting: string = 'hello';\n");
  write('src/parts/name.ts', "export const name: string = 'world';\n");
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('build-if-stale', () => {
  it(
    'says what a build is about to take: a first build’s usual time, then the last build’s, and this one’s',
    () => {
      const first = run();
      expect(first.status).toBe(0);
      expect(first.stdout).toMatch(
        /^building… \(no earlier build recorded\)\n {2}tsc compiles src\/ into dist\/; a whole build takes about \d+ s on a quiet 2-core machine \(\d+ s of CPU\), \d+ minutes at a load of \d+\n {2}built in [\d.]+ s\n$/,
      );
      write('src/greeting.ts', "export const greeting: string = 'hi';\n");
      const second = run();
      const took = /built in ([\d.]+) s/.exec(first.stdout)![1];
      expect(second.stdout).toContain(
        `\n  tsc compiles src/ into dist/; the last build here took ${took} s\n`,
      );
      expect(second.stdout).toMatch(/\n {2}built in [\d.]+ s\n$/);
    },
    TIMEOUT_MS,
  );

  it(
    'builds the first time, then skips the build while nothing changed',
    () => {
      expect(runOk()).toBe('building… (no earlier build recorded)');
      expect(read('dist/greeting.js')).toContain("'hello'");
      // Were tsc to run again (this scratch build is not incremental), it would write the file afresh.
      write('dist/greeting.js', '// left alone\n');
      expect(runOk()).toBe(SKIPPED);
      expect(runOk()).toBe(SKIPPED);
      expect(read('dist/greeting.js')).toBe('// left alone\n');
    },
    TIMEOUT_MS,
  );

  it(
    'builds again when a source changes, but not when one is only written again unchanged',
    () => {
      runOk();
      write('src/greeting.ts', read('src/greeting.ts'));
      expect(runOk()).toBe(SKIPPED);
      write('src/greeting.ts', "export const greeting: string = 'hi';\n");
      expect(runOk()).toBe('building… (src/greeting.ts changed)');
      expect(read('dist/greeting.js')).toContain("'hi'");
      expect(runOk()).toBe(SKIPPED);
    },
    TIMEOUT_MS,
  );

  it(
    'builds a source added since',
    () => {
      runOk();
      write('src/parts/extra.ts', 'export const extra = 1;\n');
      expect(runOk()).toBe('building… (src/parts/extra.ts added)');
      expect(exists('dist/parts/extra.js')).toBe(true);
    },
    TIMEOUT_MS,
  );

  it(
    'builds when a source is deleted or renamed, and leaves none of its old outputs in dist/',
    () => {
      write('src/gone/old.ts', 'export const old = 1;\n');
      runOk();
      expect(exists('dist/gone/old.js')).toBe(true);

      rmSync(path.join(root, 'src/gone'), { recursive: true });
      expect(runOk()).toBe('building… (src/gone/old.ts removed)');
      expect(exists('dist/gone')).toBe(false);

      renameSync(path.join(root, 'src/parts/name.ts'), path.join(root, 'src/parts/renamed.ts'));
      expect(runOk()).toBe('building… (src/parts/renamed.ts added, src/parts/name.ts removed)');
      expect(exists('dist/parts/renamed.js')).toBe(true);
      expect(exists('dist/parts/name.js')).toBe(false);
      expect(exists('dist/parts/name.js.map')).toBe(false);
      expect(runOk()).toBe(SKIPPED);
    },
    TIMEOUT_MS,
  );

  it(
    'builds when tsconfig.json, tsconfig.build.json or package-lock.json changes',
    () => {
      runOk();
      write('package-lock.json', '{"lockfileVersion": 3, "packages": {}}\n');
      expect(runOk()).toBe('building… (package-lock.json changed)');
      write('tsconfig.json', read('tsconfig.json').replace('"sourceMap":true', '"sourceMap":false'));
      expect(runOk()).toBe('building… (tsconfig.json changed)');
      writeBuildConfig({ incremental: true });
      expect(runOk()).toBe('building… (tsconfig.build.json changed)');
      expect(runOk()).toBe(SKIPPED);
    },
    TIMEOUT_MS,
  );

  it(
    'leaves dist/ marked stale after a failed build, so the next run builds again, even with the sources as before',
    () => {
      runOk();
      const before = read('src/greeting.ts');
      write('src/greeting.ts', 'export const greeting: number = "not a number";\n');
      const failed = run();
      expect(failed.status).toBe(1);
      expect(failed.stdout).toContain('building… (src/greeting.ts changed)');
      expect(failed.stdout).toContain('src/greeting.ts');
      expect(failed.stderr).toContain('build failed');
      // tsc writes its outputs despite type errors: dist/ now holds the failed build's.
      expect(read('dist/greeting.js')).toContain('not a number');

      const again = run();
      expect(again.status).toBe(1);
      expect(again.stdout).toContain('building… (no earlier build recorded)');

      // Back to the sources of the last good build: dist/ still holds the failed one's, so it is built.
      write('src/greeting.ts', before);
      expect(runOk()).toBe('building… (no earlier build recorded)');
      expect(read('dist/greeting.js')).toContain("'hello'");
      expect(runOk()).toBe(SKIPPED);
    },
    TIMEOUT_MS,
  );

  it(
    'emits an output deleted from dist/ again, although the incremental build info says nothing changed',
    () => {
      writeBuildConfig({ incremental: true });
      runOk();
      expect(exists('dist/.tsbuildinfo')).toBe(true);
      rmSync(path.join(root, 'dist/parts/name.js'));
      expect(runOk()).toBe('building… (dist/parts/name.js missing)');
      expect(read('dist/parts/name.js')).toContain("'world'");
    },
    TIMEOUT_MS,
  );

  it('says to run npm ci when TypeScript is not installed, and exits 1', () => {
    rmSync(path.join(root, 'node_modules'));
    const result = run();
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('TypeScript is not installed here: run npm ci first');
    expect(result.stderr).not.toContain('    at ');
  });

  it(
    'builds when asked with --force, and exits 2 naming an argument it does not know',
    () => {
      runOk();
      const forced = run('--force');
      expect(forced.status).toBe(0);
      expect(forced.stdout).toMatch(/^building… \(--force\)\n/);
      const usage = run('--frce');
      expect(usage.status).toBe(2);
      expect(usage.stderr).toContain('unknown argument --frce');
    },
    TIMEOUT_MS,
  );
});

describe("the project's tsconfig.build.json", () => {
  it('is what the script reads its layout from: src/ into dist/, with the build info inside dist/', async () => {
    const { readBuildLayout } = (await import(script)) as {
      readBuildLayout(root: string): { sourceDir: string; outDir: string; buildInfo?: string };
    };
    const layout = readBuildLayout(projectRoot);
    expect(layout.sourceDir).toBe(path.join(projectRoot, 'src'));
    expect(layout.outDir).toBe(path.join(projectRoot, 'dist'));
    // Deleting dist/ must start afresh: build info kept elsewhere would tell tsc the deleted outputs exist.
    expect(path.dirname(layout.buildInfo ?? '')).toBe(layout.outDir);
  });
});
