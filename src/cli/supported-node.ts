// The Node.js this program is made for, and what to tell someone running it on an older one. The CLI asks before
// it loads anything else: an older Node may fail to load the program at all, or, worse, run it and fail later
// somewhere that does not name the cause. package.json's engines field says the same (with engine-strict in
// .npmrc, `npm ci` on an older Node stops), and .ci/run installs this major when the machine's is older.
// Written in syntax that old Nodes parse (no `??` or `?.`), so that they get as far as saying so.
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

/** Why this Node cannot run slotfeed, and how to get one that can; null when it can. */
export function unsupportedNodeMessage(runtime: NodeRuntime): string | null {
  const major = Number.parseInt(runtime.version, 10); // "20.20.2" → 20
  if (major >= MINIMUM_NODE_MAJOR) return null;
  const lines = [
    `slotfeed needs Node.js ${MINIMUM_NODE_MAJOR} or newer, and this is Node.js ${runtime.version} (${runtime.execPath}).`,
  ];
  // The npm registry carries Node itself as packages named node-<platform>-<arch> for these.
  if (['linux', 'darwin'].includes(runtime.platform) && ['x64', 'arm64'].includes(runtime.arch)) {
    const nodePackage = `node-${runtime.platform}-${runtime.arch}`;
    const tools = `${runtime.projectRoot}/.tools`;
    lines.push(
      `Get Node ${MINIMUM_NODE_MAJOR} beside the project, without touching the system's (as .ci/run does):`,
      `  npm install --prefix ${tools} ${nodePackage}@${MINIMUM_NODE_MAJOR}`,
      `  export PATH="${tools}/node_modules/${nodePackage}/bin:$PATH"`,
      `or with a version manager (nvm install ${MINIMUM_NODE_MAJOR}); then run npm ci and this command again.`,
    );
  } else {
    lines.push(
      `Install Node.js ${MINIMUM_NODE_MAJOR} (nvm install ${MINIMUM_NODE_MAJOR}, or your system's packages), then run npm ci and this command again.`,
    );
  }
  return lines.join('\n');
}
