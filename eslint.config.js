// ESLint flat config for the whole monorepo.
// The rules that shape the architecture (see docs/architecture.md, "Module boundaries"):
//   - no import cycles, inside a package or between packages;
//   - packages import each other only through their public entry (`@strata/<pkg>`), never `@strata/<pkg>/src/...`
//     or a relative path into another package (import-x/no-relative-packages);
//   - apps never import other apps (the only exception is the e2e harness, which starts them in process);
//   - every promise is awaited, returned or explicitly voided, in every file ESLint reads (TypeScript and JavaScript);
//   - a switch over a union names every member (or has a default for the rest).
// The apps are the folders of apps/ (scripts/workspace-apps.js), so a new app gets the boundaries by existing.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { workspaceApps } from './scripts/workspace-apps.js';
import { queryRowsPlugin } from './eslint/query-rows.js';
import { workspaceScopePlugin } from './eslint/workspace-scope.js';

const APPS = workspaceApps();
/** Type-aware linting of JavaScript: these files join TypeScript's default project (globs cannot use `**`). */
const JAVASCRIPT = ['*.js', '*.mjs', '*.cjs', 'scripts/*.js', 'scripts/*.mjs', 'eslint/*.js'];

// class-validator's IsOptional skips null as well as undefined, so `{"field": null}` slips past
// validation into a NOT NULL column: DTOs use @strata/platform's IsOptional (or IsNullable).
const RESTRICTED_PATHS = [
  {
    name: 'class-validator',
    importNames: ['IsOptional'],
    message:
      "Use IsOptional (or IsNullable where null has a meaning) from @strata/platform: class-validator's lets null through.",
  },
];

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', '.toolchain/**', 'reports/**', 'coverage/**', '**/*.d.ts'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: JAVASCRIPT },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { 'import-x': importX },
    settings: {
      // Lets import-x parse the TypeScript files it follows (no-cycle is silent without it).
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
      'import-x/resolver-next': [createTypeScriptImportResolver({ alwaysTryTypes: true })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-self-import': 'error',
      // A relative import that lands in another workspace package: use @strata/<name>.
      'import-x/no-relative-packages': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: false, requireDefaultForNonUnion: false },
      ],
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'off',
      // Nest and class-validator use classes as DTO and DI tokens; these rules fight that style.
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // class-validator's ValidateNested alone takes an array for a nested object (`[{…}]` was stored
      // as `{"0": …}`): nested objects use IsNestedObject from @strata/platform, lists `{each: true}`.
      'no-restricted-syntax': [
        'error',
        {
          selector: "Decorator > CallExpression[callee.name='ValidateNested'][arguments.length=0]",
          message:
            'Use IsNestedObject(() => Type) from @strata/platform for a nested object (ValidateNested alone accepts arrays), or ValidateNested({ each: true }) for a list.',
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: RESTRICTED_PATHS,
          patterns: [
            {
              // A library's declared entries only (package.json `exports`): the sandbox engine is one.
              group: ['@strata/*/*', '!@strata/sandbox/isolated-vm', '!@strata/sandbox/processes'],
              message: 'Import a package through its public entry (@strata/<name>), not its files.',
            },
          ],
        },
      ],
    },
  },
  // Apps never import other apps.
  ...APPS.map((app) => ({
    files: [`apps/${app.folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: RESTRICTED_PATHS,
          patterns: [
            {
              // A library's declared entries only (package.json `exports`): the sandbox engine is one.
              group: ['@strata/*/*', '!@strata/sandbox/isolated-vm', '!@strata/sandbox/processes'],
              message: 'Import a package through its public entry (@strata/<name>), not its files.',
            },
            {
              group: APPS.filter((other) => other !== app).map((other) => other.name),
              message: 'Apps never import other apps: share code through a library in libs/.',
            },
          ],
        },
      ],
    },
  })),
  // Tenant isolation in the structure: repositories alone reach the database, and only trusted
  // code issues a WorkspaceScope (eslint/workspace-scope.js lists the exceptions and why).
  // An UPDATE's or DELETE's RETURNING rows are read through rowsOf() (eslint/query-rows.js).
  {
    files: ['**/*.ts'],
    plugins: { strata: { rules: { ...workspaceScopePlugin.rules, ...queryRowsPlugin.rules } } },
    rules: { 'strata/data-access': 'error', 'strata/scope-issuers': 'error', 'strata/update-rows': 'error' },
  },
  // Libraries never import apps.
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: RESTRICTED_PATHS,
          patterns: [
            {
              // A library's declared entries only (package.json `exports`): the sandbox engine is one.
              group: ['@strata/*/*', '!@strata/sandbox/isolated-vm', '!@strata/sandbox/processes'],
              message: 'Import a package through its public entry (@strata/<name>), not its files.',
            },
            { group: APPS.map((app) => app.name), message: 'Libraries never import apps.' },
          ],
        },
      ],
    },
  },
  // Tests may use loose typing on parsed HTTP bodies.
  {
    files: [
      '**/*.spec.ts',
      '**/*.int-spec.ts',
      '**/*.e2e-spec.ts',
      'e2e/**/*.ts',
      'bench/**/*.ts',
      'testkit/**/*.ts',
      'deploy/test/**/*.ts',
    ],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  // JavaScript is linted with type information too (JAVASCRIPT above), so the promise rules hold there as well;
  // only the rules about TypeScript's own syntax and `any` from untyped modules are off.
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
