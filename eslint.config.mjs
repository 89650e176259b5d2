// Lint for the TypeScript sources (the edit dialogs' code too), tests, benchmarks, and the plain-JS build scripts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import { builtinModules } from 'module';

/** The package's rooms under src/ (what a boundary rule can name). */
const ROOMS = ['nodes', 'client', 'audit', 'coordination', 'instrument', 'editor', 'contract', 'simulator'];

/**
 * One no-restricted-imports rule per room: every other room is refused but those it `may` import; `indexOnly` rooms
 * only through their index; `allow` lists single modules still let through.
 */
function rooms(table) {
  return Object.entries(table).map(([dir, { may, indexOnly = [], allow = [] }]) => {
    const own = dir.replace(/^src\//, '');
    const refused = ROOMS.filter((r) => r !== own && !may.includes(r));
    const allowed = allow.map((a) => `(?!${a.replace(/^(\.\.\/)+/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$)`).join('');
    const patterns = [
      {
        regex: `^(\\.\\./)+${allowed}(${refused.join('|')})(/|$)`,
        message: `${dir} may import ${may.length ? may.map((r) => `src/${r}`).join(', ') : 'no other room of the package'} (eslint.config.mjs, "Layers below the nodes")`,
      },
      ...indexOnly.map((r) => ({
        regex: `^(\\.\\./)+${r}/`,
        message: `${dir} uses src/${r} through its index (../${r}) only.`,
      })),
    ];
    return { files: [`${dir}/**/*.ts`], rules: { 'no-restricted-imports': ['error', { patterns }] } };
  });
}

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
      // register wires, behaviour sits in small classes and pure modules (issue 30.3): every line counts
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: false, skipComments: false }],
    },
  },
  // Layers below the nodes (issue 30.2): each room imports only the rooms under it, so no arrow runs back up.
  //   contract      nothing of the package (the facts of the specification the client and the simulator share)
  //   simulator     contract
  //   client        contract
  //   coordination  client, contract
  //   audit         client (its index), coordination (its keys), contract, observe (the metrics' sync time)
  //   instrument    client (its index), audit, contract, observe: one home per instrument (0.4)
  //   editor        contract (browser code: no runtime room)
  //   observe       nothing (the lab events, the state document and the metrics: read by nodes, fed by them and audit)
  // Redaction and the config migration steps live in contract (0.4), so no room imports a node folder.
  ...rooms({
    'src/contract': { may: [] },
    'src/simulator': { may: ['contract'] },
    'src/client': { may: ['contract'] },
    'src/coordination': { may: ['client', 'contract'] },
    'src/audit': { may: ['client', 'coordination', 'contract', 'observe'], indexOnly: ['client'] },
    'src/instrument': { may: ['client', 'audit', 'contract', 'observe'], indexOnly: ['client'] },
    'src/editor': { may: ['contract'] },
    'src/observe': { may: [] },
  }),
  {
    // Type-only imports spelled `import type` (issue 30.2), so a type never becomes a runtime arrow: every room of src/
    // (fixed with npx eslint --fix).
    files: ['src/**/*.ts'],
    rules: { '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }] },
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
