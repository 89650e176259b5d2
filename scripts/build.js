#!/usr/bin/env node
'use strict';
// Compiles src/ to nodes/ and puts each node's editor files (html, locales, icons) beside its js,
// where Node-RED looks for them. Plain JS so that `prepare` runs before anything is compiled.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { expandRows } = require('./editor-rows');

const root = path.resolve(__dirname, '..');
const src = path.join(root, 'src');
const out = path.join(root, 'nodes');

const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

/** What the compiler needs, at the versions package.json names: TypeScript, the type packages, the runtime deps. */
const BUILD_TOOLS = ['typescript', '@types/node', '@types/mustache', '@types/ws', '@types/node-red', '@types/jquery'];

function resolveFrom(dir, request) {
  try {
    return require.resolve(request, { paths: [dir] });
  } catch {
    return undefined;
  }
}

/**
 * A fresh checkout installed with `npm install /path/to/checkout` has no devDependencies: fetch the build tools
 * into a temporary folder (not into the checkout, whose node_modules npm manages) and compile with a tsconfig
 * that looks there. Returns the tsc to run and the project file.
 */
function toolsForFreshCheckout() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-build-'));
  const specs = [...BUILD_TOOLS, ...Object.keys(pkg.dependencies || {})].map((name) => {
    const range = (pkg.devDependencies || {})[name] || (pkg.dependencies || {})[name];
    return range ? `${name}@${range}` : name;
  });
  console.error(`build: TypeScript is not installed in this checkout (a fresh clone); fetching the build tools into ${dir}`);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ private: true }));
  try {
    npm(['install', '--prefix', dir, '--no-save', '--ignore-scripts', ...specs], dir);
  } catch (err) {
    console.error(
      `build: TypeScript is not installed and fetching it failed (${err.message}). In the checkout, run \`npm install\` ` +
        '(with its devDependencies) and then `npm run build`, or install a packed tarball (`npm pack`).',
    );
    process.exit(1);
  }
  const modules = path.join(dir, 'node_modules');
  const project = path.join(dir, 'tsconfig.json');
  fs.writeFileSync(
    project,
    JSON.stringify({
      extends: path.join(root, 'tsconfig.build.json'),
      compilerOptions: {
        typeRoots: [path.join(modules, '@types')],
        baseUrl: dir,
        paths: { '*': ['node_modules/*', 'node_modules/@types/*'] },
      },
    }),
  );
  const editorProject = path.join(dir, 'tsconfig.editor.json');
  fs.writeFileSync(
    editorProject,
    JSON.stringify({
      extends: path.join(root, 'tsconfig.editor.json'),
      compilerOptions: { typeRoots: [path.join(modules, '@types')] },
    }),
  );
  return {
    tsc: path.join(modules, 'typescript', 'bin', 'tsc'),
    project,
    editorProject,
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** How to run npm: the npm that runs this script (prepare), else the one on PATH. */
function npm(args, cwd) {
  const npmCli = process.env.npm_execpath;
  const [cmd, pre] = npmCli && npmCli.endsWith('.js') ? [process.execPath, [npmCli]] : ['npm', []];
  execFileSync(cmd, [...pre, ...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, npm_config_global: '', npm_config_prefix: '' },
  });
}

// `npm install /path/to/checkout` links the checkout and installs none of its dependencies: the nodes would fail
// to load (no ws, no ioredis). When npm runs this as `prepare` there, install the runtime dependencies into the checkout.
const runtimeDeps = Object.keys(pkg.dependencies || {});
// Looked up on disk, not with require.resolve: a package whose "exports" hides package.json (re2js) would look missing,
// and `npm ci --omit=dev` would then remove the devDependencies npm had just installed.
const isInstalled = (name) => fs.existsSync(path.join(root, 'node_modules', ...name.split('/'), 'package.json'));
if (process.env.npm_lifecycle_event === 'prepare' && runtimeDeps.some((name) => !isInstalled(name))) {
  console.error('build: the runtime dependencies are not installed in this checkout; installing them (npm ci --omit=dev)');
  npm(['ci', '--omit=dev', '--ignore-scripts'], root);
}

const installed = resolveFrom(root, 'typescript/bin/tsc');
const tools = installed
  ? {
      tsc: installed,
      project: path.join(root, 'tsconfig.build.json'),
      editorProject: path.join(root, 'tsconfig.editor.json'),
      cleanup: () => {},
    }
  : toolsForFreshCheckout();

// tsc overwrites its output in place (no clean step), so parallel builds never see an empty nodes/.
// The edit dialogs' code (src/editor, src/nodes/*/editor.ts) is checked and compiled on its own (DOM, jQuery) into a
// scratch folder, then bundled into each node's html below.
const editorOut = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-editor-'));
let failed = false;
try {
  execFileSync(process.execPath, [tools.tsc, '-p', tools.project], { stdio: 'inherit' });
} catch {
  failed = true;
}
try {
  execFileSync(process.execPath, [tools.tsc, '-p', tools.editorProject, '--outDir', editorOut], { stdio: 'inherit' });
} catch {
  failed = true;
} finally {
  tools.cleanup();
}

function copyTree(from, to, keep) {
  if (!fs.existsSync(from)) return;
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const a = path.join(from, entry.name);
    const b = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(a, b, keep);
    else if (keep(entry.name)) {
      fs.mkdirSync(to, { recursive: true });
      fs.copyFileSync(a, b);
    }
  }
}

const editorFile = (name) => !name.endsWith('.ts');

/**
 * The edit dialog's script of a node: its compiled editor.js and every module it requires (relative paths only),
 * each wrapped as a CommonJS module function, and the runtime's migration table of the type, from which the
 * dialog's defaults and version are generated. No bundler is needed for a few small modules with no package imports.
 */
function editorBundle(type, table) {
  const entry = `nodes/${type}/editor.js`;
  const modules = new Map();
  const queue = [entry];
  while (queue.length > 0) {
    const id = queue.shift();
    if (modules.has(id)) continue;
    const code = fs.readFileSync(path.join(editorOut, id), 'utf8').replace(/\/\/# sourceMappingURL=.*$/m, '');
    const linked = code.replace(/require\("([^"]+)"\)/g, (_m, request) => {
      if (!request.startsWith('.'))
        throw new Error(`${id}: the editor code imports "${request}"; only relative imports are bundled`);
      const target = path.posix.join(path.posix.dirname(id), request) + '.js';
      queue.push(target);
      return `require(${JSON.stringify(target)})`;
    });
    modules.set(id, linked);
  }
  const body = [...modules].map(([id, code]) => `${JSON.stringify(id)}: function (module, exports, require) {\n${code}\n}`);
  const script = [
    `(function (LH_MIGRATIONS) {`,
    `var modules = {\n${body.join(',\n')}\n};`,
    `var cache = {};`,
    `function require(id) {`,
    `  if (!cache[id]) { var module = (cache[id] = { exports: {} }); modules[id](module, module.exports, require); }`,
    `  return cache[id].exports;`,
    `}`,
    `require(${JSON.stringify(entry)});`,
    `})(${JSON.stringify({ [type]: table[type] ?? [] })});`,
  ].join('\n');
  if (/<\/script/i.test(script)) throw new Error(`${type}: the editor script contains "</script"`);
  return `<script type="text/javascript">\n// Built by scripts/build.js from src/nodes/${type}/editor.ts and src/editor/: do not edit.\n${script}\n</script>\n`;
}

// The runtime's migration tables, as compiled above: the one source of the dialogs' defaults and versions.
const migrationsJs = path.join(out, 'nodes', 'shared', 'migrations.js');
const MIGRATIONS = fs.existsSync(migrationsJs) ? require(migrationsJs).MIGRATIONS : {};
const nodesDir = path.join(src, 'nodes');
// Status texts every node shares, merged into each node's own message catalogue under "common".
const common = JSON.parse(fs.readFileSync(path.join(nodesDir, 'shared', 'common.json'), 'utf8'));
for (const type of fs.readdirSync(nodesDir)) {
  const dir = path.join(nodesDir, type);
  if (!type.startsWith('lh-') || !fs.statSync(dir).isDirectory()) continue;
  const target = path.join(out, 'nodes', type);
  copyTree(dir, target, editorFile);
  const html = path.join(target, `${type}.html`);
  if (fs.existsSync(html)) {
    const script = fs.existsSync(path.join(editorOut, 'nodes', type, 'editor.js')) ? editorBundle(type, MIGRATIONS) : '';
    fs.writeFileSync(html, script + expandRows(fs.readFileSync(html, 'utf8'), type));
  }
  copyTree(path.join(root, 'icons'), path.join(target, 'icons'), () => true);
  const catalog = path.join(target, 'locales', 'en-US', `${type}.json`);
  const messages = fs.existsSync(catalog) ? JSON.parse(fs.readFileSync(catalog, 'utf8')) : {};
  messages.common = common;
  fs.mkdirSync(path.dirname(catalog), { recursive: true });
  fs.writeFileSync(catalog, JSON.stringify(messages, null, 2));
}
fs.rmSync(editorOut, { recursive: true, force: true });
copyTree(path.join(src, 'simulator', 'certs'), path.join(out, 'simulator', 'certs'), (n) => n.endsWith('.pem'));
// Compiled files whose source is gone (a module moved or renamed) would still be packed and loaded: remove them.
function pruneStale(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) pruneStale(file);
    const compiled = /^(.*)\.(js|js\.map|d\.ts)$/.exec(entry.name);
    if (!entry.isFile() || !compiled) continue;
    const source = path.join(src, path.relative(out, dir), compiled[1]);
    if (!fs.existsSync(`${source}.ts`) && !fs.existsSync(`${source}.js`)) fs.rmSync(file);
  }
  if (dir !== out && fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
}
pruneStale(out);
for (const cli of [path.join(out, 'simulator', 'cli.js'), path.join(out, 'audit', 'cli.js')]) {
  if (fs.existsSync(cli)) fs.chmodSync(cli, 0o755);
}
if (failed) {
  console.error('build: TypeScript reported errors (output was still written)');
  process.exit(1);
}
