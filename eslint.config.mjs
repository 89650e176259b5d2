// Lint for the TypeScript sources (the edit dialogs' code too), tests, benchmarks, and the plain-JS build scripts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import { builtinModules } from 'module';

export default tseslint.config(
  { ignores: ['node_modules/', 'nodes/', 'test-output/', 'bench/results/', '.run/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { globals: { ...globals.node, ...globals.mocha } },
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      // one import order everywhere (packages, then the package's own modules by path), fixed by `npm run format`
      'simple-import-sort/imports': [
        'error',
        { groups: [['^node:', `^(${builtinModules.join('|')})(/|$)`], ['^@?\\w'], ['^'], ['^\\.']] },
      ],
      'simple-import-sort/exports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': 'off',
      eqeqeq: ['error', 'always'],
      'no-console': 'off',
    },
  },
  {
    // Layers: a node folder imports only src/nodes/shared, the domain folders (answering, runs) and the client's index;
    // code used by several nodes lives in one of those folders, never in another node's folder.
    files: ['src/nodes/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../lh-*', '../lh-*/**', '../../nodes/lh-*/**'],
              message:
                'node folders never import each other: move the shared code to src/nodes/shared or a domain folder (answering, runs).',
            },
            {
              group: ['../../client/*', '../../client/**'],
              message: 'nodes use the client through its index (../../client) only.',
            },
          ],
        },
      ],
    },
  },
  {
    // The edit dialogs' code (bundled into each node's html by scripts/build.js) runs in the Node-RED editor.
    files: ['src/editor/**/*.ts', 'src/nodes/*/editor.ts'],
    languageOptions: { globals: { ...globals.browser, RED: 'readonly', $: 'readonly' } },
  },
  {
    // Tests and benchmarks load the Node-RED runtime under test (4.x or 3.1) by a name chosen at run time.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['scripts/**/*.js', '.mocharc.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
