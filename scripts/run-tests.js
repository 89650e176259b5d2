#!/usr/bin/env node
// The test step of `npm test`: the suite on Node-RED 4, the coordination suite (several Node-RED processes and a real
// Redis: test/coordination) and the node tests on Node-RED 3.1 (test:nr3) run side by side. Most of each is waiting on
// real sockets and child processes (about a third of two cores busy), so together they take the time of the longest
// instead of the sum. The other runs' output is held and printed after the main run's, so none is interleaved.
// Exits non-zero when any run fails. LH_TEST_SEQUENTIAL=1 runs them one after the other.
'use strict';
const { spawn } = require('child_process');
const path = require('path');

const root = path.resolve(__dirname, '..');
const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');

const children = new Set();

// live: the run's output is also written as it comes (the main run); it is kept in every case, so the failures of
// each run can be repeated at the very end, where a CI log that shows only its tail still has them.
function run(args, env, live) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [mocha, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    const chunks = [];
    child.stdout.on('data', (c) => {
      chunks.push(c);
      if (live) process.stdout.write(c);
    });
    child.stderr.on('data', (c) => {
      chunks.push(c);
      if (live) process.stderr.write(c);
    });
    child.on('error', (err) => chunks.push(Buffer.from(`could not start mocha: ${err.message}\n`)));
    // 'close', not 'exit': the piped output is complete only then
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code: code ?? 1, signal, output: Buffer.concat(chunks).toString() });
    });
  });
}

// A cancelled run (CI's timeout, kill) stops both suites instead of leaving them running.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exitCode = code;
  });
}

// The part of a mocha run's output from its summary ("N passing", "N failing" and each failure) on, at most 30,000
// characters (the last ones); the whole output when there is no summary (a crash before it).
function failures(output) {
  const at = output.search(/^\s*\d+ passing/m);
  const part = at >= 0 ? output.slice(at) : output;
  return part.length > 30000 ? `…${part.slice(-30000)}` : part;
}

async function main() {
  const sequential = process.env.LH_TEST_SEQUENTIAL === '1';
  const main = run(['--ignore', 'test/coordination/**'], {}, true);
  if (sequential) await main;
  const coordination = run(['--config', '.mocharc.coordination.json'], {}, false);
  if (sequential) await coordination;
  const nr3 = run(['--config', '.mocharc.nr3.json'], { LH_NODE_RED: 'node-red-3' }, false);
  const [a, c, b] = await Promise.all([main, coordination, nr3]);
  process.stdout.write('\n--- coordination suite (test/coordination) ---\n');
  process.stdout.write(c.output);
  process.stdout.write('\n--- node tests on Node-RED 3.1 (test:nr3) ---\n');
  process.stdout.write(b.output);
  const what = (r) => `exit ${r.code}${r.signal ? `, ${r.signal}` : ''}`;
  const failed = [
    a.code !== 0 && `Node-RED 4 suite (${what(a)})`,
    c.code !== 0 && `coordination suite (${what(c)})`,
    b.code !== 0 && `Node-RED 3.1 suite (${what(b)})`,
  ];
  const named = failed.filter(Boolean);
  for (const [name, r] of [
    ['Node-RED 4 suite', a],
    ['coordination suite', c],
    ['Node-RED 3.1 suite', b],
  ]) {
    if (r.code !== 0) process.stdout.write(`\n--- failures of the ${name}, repeated ---\n${failures(r.output)}\n`);
  }
  if (named.length > 0) {
    process.stderr.write(`\nnpm test failed: ${named.join(' and ')}\n`);
    process.exitCode = process.exitCode || 1; // set, not exit(): the held output is written out first
  }
}

void main();
