/** One Jest run for the whole monorepo: ESM (Nest 12 is ESM-only), TypeScript through SWC. */
import { workspaceApps } from './scripts/workspace-apps.js';

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

export default {
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/scripts/jest-env.js'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    // Every folder of apps/ (an app is imported by its package name), before the libraries' catch-all.
    ...Object.fromEntries(
      workspaceApps().map((app) => [
        `^${app.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
        `<rootDir>/apps/${app.folder}/src/index.ts`,
      ]),
    ),
    '^@strata/testkit$': '<rootDir>/testkit/src/index.ts',
    '^@strata/sandbox/isolated-vm$': '<rootDir>/libs/sandbox/src/isolated-vm.ts',
    '^@strata/sandbox/processes$': '<rootDir>/libs/sandbox/src/processes.ts',
    '^@strata/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testMatch: [
    '<rootDir>/{apps,libs}/*/src/**/*.spec.ts',
    '<rootDir>/{apps,libs}/*/test/**/*.int-spec.ts',
    '<rootDir>/e2e/**/*.e2e-spec.ts',
    '<rootDir>/deploy/test/**/*.spec.ts',
  ],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
