// The Node.js this program is made for, and what to tell someone running it on an older one. The CLI asks before
// it loads anything else: an older Node may fail to load the program at all, or, worse, run it and fail later
// somewhere that does not name the cause. package.json's engines field says the same (with engine-strict in
// .npmrc, `npm ci` on an older Node stops), and .ci/run installs this major when the machine's is older.
// Written in syntax that old Nodes parse (no `??` or `?.`), so that they get as far as saying so.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const MINIMUM_NODE_MAJOR = 24;

export interface NodeRuntime {
  /** process.versions.node */
  version: string;
  /** process.execPath: which node is running, when several are installed. */
  execPath: string;
  platform: NodeJS.Platform;
  arch: string;
  /** The checkout the CLI runs from, where Node can be installed beside the project as .ci/run does. */
  projectRoot: string;
}

/** The version of the Node installed beside the project (.tools, as .ci/run installs it), or null. */
function nodeBesideProject(packageDir: string): string | null {
  try {
    const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof manifest.version === 'string' ? manifest.version : null;
  } catch {
    return null;
  }
}

/**
 * Why this Node cannot run slotfeed, and only the steps still needed to run it on one that can: Node 24
 * installed beside the project is only put first on PATH, and `npm ci` is advised only where the project has no
 * node_modules (modules installed by a supported Node serve any newer one). Null when this Node can run it.
 */
export function unsupportedNodeMessage(runtime: NodeRuntime): string | null {
  const major = Number.parseInt(runtime.version, 10); // "20.20.2" → 20
  if (major >= MINIMUM_NODE_MAJOR) return null;
  const lines = [
    `slotfeed needs Node.js ${MINIMUM_NODE_MAJOR} or newer, and this is Node.js ${runtime.version} (${runtime.execPath}).`,
  ];
  const thenRunAgain = existsSync(path.join(runtime.projectRoot, 'node_modules'))
    ? 'then run this command again'
    : 'then run npm ci and this command again';
  // The npm registry carries Node itself as packages named node-<platform>-<arch> for these.
  if (['linux', 'darwin'].includes(runtime.platform) && ['x64', 'arm64'].includes(runtime.arch)) {
    const nodePackage = `node-${runtime.platform}-${runtime.arch}`;
    const tools = `${runtime.projectRoot}/.tools`;
    const packageDir = `${tools}/node_modules/${nodePackage}`;
    const pathLine = `  export PATH="${packageDir}/bin:$PATH"`;
    const beside = nodeBesideProject(packageDir);
    if (beside !== null && Number.parseInt(beside, 10) >= MINIMUM_NODE_MAJOR) {
      lines.push(
        `Node.js ${beside} is installed beside the project: put it first on PATH, ${thenRunAgain}:`,
        pathLine,
      );
    } else {
      lines.push(
        `Get Node ${MINIMUM_NODE_MAJOR} beside the project, without touching the system's (as .ci/run does):`,
        `  npm install --prefix ${tools} ${nodePackage}@${MINIMUM_NODE_MAJOR}`,
        pathLine,
        `or with a version manager (nvm install ${MINIMUM_NODE_MAJOR}); ${thenRunAgain}.`,
      );
    }
  } else {
    lines.push(
      `Install Node.js ${MINIMUM_NODE_MAJOR} (nvm install ${MINIMUM_NODE_MAJOR}, or your system's packages), ${thenRunAgain}.`,
    );
  }
  return lines.join('\n');
}
