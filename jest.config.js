/** Jest runs TypeScript through SWC; decorator metadata must be emitted or type-graphql loses its types. */
const transform = {
  '^.+\\.ts$': ['@swc/jest', {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  }],
};

/**
 * Two projects: `unit` (test/unit: no PostgreSQL, Redis or chain; `npx jest --selectProjects unit`)
 * and `integration` (everything else, against the real backends its global setup prepares).
 * `npm test` runs both.
 */
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      roots: ['<rootDir>/test/unit'],
      testMatch: ['**/*.test.ts'],
      transform,
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/unit/'],
      transform,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
  testTimeout: 60000,
  maxWorkers: 2,
};
