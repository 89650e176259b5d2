#!/usr/bin/env node
'use strict';
// Compiles src/ to nodes/ and puts each node's editor files (html, locales, icons) beside its js,
// where Node-RED looks for them. Plain JS so that `prepare` runs before anything is compiled.
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const root = path.resolve(__dirname, '..');
const src = path.join(root, 'src');
const out = path.join(root, 'nodes');

// tsc overwrites its output in place (no clean step), so parallel builds never see an empty nodes/.
let failed = false;
try {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], {
    stdio: 'inherit',
  });
} catch {
  failed = true;
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
const nodesDir = path.join(src, 'nodes');
// Status texts every node shares, merged into each node's own message catalogue under "common".
const common = JSON.parse(fs.readFileSync(path.join(nodesDir, 'shared', 'common.json'), 'utf8'));
for (const type of fs.readdirSync(nodesDir)) {
  const dir = path.join(nodesDir, type);
  if (!type.startsWith('lh-') || !fs.statSync(dir).isDirectory()) continue;
  const target = path.join(out, 'nodes', type);
  copyTree(dir, target, editorFile);
  copyTree(path.join(root, 'icons'), path.join(target, 'icons'), () => true);
  const catalog = path.join(target, 'locales', 'en-US', `${type}.json`);
  const messages = fs.existsSync(catalog) ? JSON.parse(fs.readFileSync(catalog, 'utf8')) : {};
  messages.common = common;
  fs.mkdirSync(path.dirname(catalog), { recursive: true });
  fs.writeFileSync(catalog, JSON.stringify(messages, null, 2));
}
copyTree(path.join(src, 'simulator', 'certs'), path.join(out, 'simulator', 'certs'), (n) => n.endsWith('.pem'));
const cli = path.join(out, 'simulator', 'cli.js');
if (fs.existsSync(cli)) fs.chmodSync(cli, 0o755);
if (failed) {
  console.error('build: TypeScript reported errors (output was still written)');
  process.exit(1);
}
