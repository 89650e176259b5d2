#!/usr/bin/env node
// npm run chaos -- [--seed N] [--minutes M] [--replicas 2|3] [--kinds ...] [--no-shrink] [--shrink-runs K] [--replay FILE]
// Builds the package (the replicas load nodes/), then runs test/chaos/run.ts: real Node-RED processes, a real
// redis-server and the simulator under a seeded schedule of faults; see README "Chaos test". Ctrl-C stops every
// child process it started.
'use strict';
const { spawn, execFileSync } = require('child_process');
const path = require('path');

const root = path.resolve(__dirname, '..');
execFileSync(process.execPath, [path.join(root, 'scripts', 'build.js')], { cwd: root, stdio: 'inherit' });
const child = spawn(
  process.execPath,
  ['-r', 'ts-node/register/transpile-only', path.join(root, 'test', 'chaos', 'run.ts'), ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit' },
);
// the child handles Ctrl-C itself (it tears its world down first); a signal sent to this process alone is passed on
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' ? 130 : 1)));
