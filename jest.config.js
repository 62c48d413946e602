// Tests run as native ES modules (the project is "type": "module"); SWC strips types only, `npm run typecheck`
// is what checks them.
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
  testTimeout: 30000,
  // Checks that Postgres and Redis answer; starts embedded fallbacks when they do not (test/support).
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Each file gets its own database and Redis prefix (test/support), so files may run side by side.
  maxWorkers: 2,
};
