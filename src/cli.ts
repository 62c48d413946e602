#!/usr/bin/env node
// Entry point of the `slotfeed` binary; everything else lives in cli/program.ts so it can be tested. The Node
// version is checked before the program is loaded (cli/supported-node.ts), so nothing else is imported above.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { unsupportedNodeMessage } from './cli/supported-node.js';

const unsupported = unsupportedNodeMessage({
  version: process.versions.node,
  execPath: process.execPath,
  platform: process.platform,
  arch: process.arch,
  // dist/cli.js (or src/cli.ts) sits one level below the checkout.
  projectRoot: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'),
});

if (unsupported !== null) {
  process.stderr.write(`${unsupported}\n`);
  process.exitCode = 2;
} else {
  // Loaded with import() rather than top-level await: Node 12 (Debian 11's) would not parse the latter.
  void Promise.all([
    import('./lib/coerce-error.js'),
    import('./cli/program.js'),
    import('./cli/demo-env-discovery.js'),
  ]).then(([{ coerceError }, { runCli }, { withRunningDemo }]) => {
    const argv = process.argv.slice(2);
    // Run from the project directory while a demo runs, the CLI reaches that demo with nothing to paste.
    const { env, note } = withRunningDemo(argv, process.env, process.cwd());
    if (note !== undefined) process.stderr.write(`${note}\n`);
    return runCli(argv, env).then(
      (code) => {
        process.exitCode = code;
        // Everything was closed in order; a library handle that still lingers must not keep a finished daemon
        // (or a CLI command) alive. Unref'd, so output still flushing gets its chance first.
        setTimeout(() => process.exit(code), 3000).unref();
      },
      (thrown: unknown) => {
        process.stderr.write(`slotfeed: ${coerceError(thrown).message}\n`);
        process.exitCode = 1;
      },
    );
  });
}
