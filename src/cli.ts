#!/usr/bin/env node
// Entry point of the `slotfeed` binary; everything else lives in cli/program.ts so it can be tested.
import { coerceError } from './lib/coerce-error.js';
import { runCli } from './cli/program.js';

runCli(process.argv.slice(2), process.env).then(
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
