#!/usr/bin/env node
'use strict';
// What a newcomer does, on a clean machine: clone the repository, `npm install /path/to/checkout` into a Node-RED
// user dir (as the README says), start Node-RED there. Passes when every node type of package.json is in the palette.
const { execFileSync } = require('child_process');
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');

const repo = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-install-'));
const checkout = path.join(work, 'checkout');
const userDir = path.join(work, 'user');

function run(cmd, args, cwd) {
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
}

async function main() {
  const started = Date.now();
  run('git', ['clone', '--quiet', '--no-hardlinks', repo, checkout], work);
  fs.mkdirSync(userDir);
  fs.writeFileSync(path.join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-project', private: true }));
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', checkout], userDir);
  console.log(`install-check: installed from a fresh clone in ${Math.round((Date.now() - started) / 1000)} s`);

  // The Node-RED of this repository's devDependencies, embedded; it loads the user dir's node_modules like a user's does.
  const RED = require(require.resolve('node-red', { paths: [repo] }));
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const problems = [];
  RED.init(server, {
    userDir,
    flowFile: 'flows.json',
    httpAdminRoot: '/',
    uiPort: server.address().port,
    credentialSecret: false,
    logging: { console: { level: 'error' } },
    editorTheme: { tours: false },
  });
  await RED.start();
  try {
    const list = RED.runtime ? await RED.runtime.nodes.getNodeList({}) : RED.nodes.getNodeList();
    const ours = list.filter((set) => set.module === pkg.name);
    const types = new Set(ours.flatMap((set) => (set.enabled && !set.err ? set.types : [])));
    for (const set of ours) if (set.err) problems.push(`${set.id}: ${set.err}`);
    for (const type of Object.keys(pkg['node-red'].nodes)) if (!types.has(type)) problems.push(`${type} is not in the palette`);
  } finally {
    await RED.stop();
    server.close();
  }
  if (problems.length > 0) throw new Error(`install-check: ${problems.join('; ')}`);
  console.log(
    `install-check: all ${Object.keys(pkg['node-red'].nodes).length} node types load (${Math.round((Date.now() - started) / 1000)} s)`,
  );
}

main()
  .then(() => fs.rmSync(work, { recursive: true, force: true }))
  .then(
    () => process.exit(0),
    (err) => {
      console.error(err.message);
      console.error(`install-check: the clone and the user dir are kept in ${work}`);
      process.exit(1);
    },
  );
