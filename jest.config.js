// Tests run as native ES modules (the project is "type": "module"); SWC strips types only, `npm run typecheck`
// is what checks them.

// Ceilings are safety nets stretched for a loaded machine (test/support/patience.ts, which reads TEST_SLACK the
// same way): a test that passes never waits for its timeout.
const slack = Number(process.env.TEST_SLACK) >= 1 ? Number(process.env.TEST_SLACK) : 4;

/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2023', keepClassNames: true },
        module: { type: 'es6' },
      },
    ],
  },
  testTimeout: 30_000 * slack,
  // jest's own summary, and a line per finished file and a minute when not in a terminal (a long run is not silent).
  reporters: ['default', '<rootDir>/test/support/progress-reporter.js'],
  // Checks that Postgres and Redis answer; starts embedded fallbacks when they do not (test/support).
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Each file gets its own database and Redis prefix (test/support), so files may run side by side.
  maxWorkers: 2,
  // A worker keeps what every file it ran loaded (native ES modules in vm contexts are never freed): 40–50 MB a
  // file here, so a worker that ran half of the suite passed V8's 4 GB heap and crashed in the file it was running
  // (demo-world, in a ci-check). Jest restarts a worker between files once its heap is past this.
  workerIdleMemoryLimit: '1GB',
};
