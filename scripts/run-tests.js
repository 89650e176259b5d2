#!/usr/bin/env node
// The test step of `npm test`, in three lanes of about equal time: the suite on Node-RED 4, then the browser, examples
// and standard-Node-RED tests (Chromium, npm start, a fresh user dir); the coordination suite (several Node-RED
// processes and a real Redis: test/coordination), then Node-RED 5 on Node.js 22 (test:nr5), then the bounded chaos run
// (test/chaos); the type checks and lint (scripts/checks.js), the review tests (test/review, the seeded models and the
// cases hostile passes found), then the node tests on Node-RED 3.1 (test:nr3). Most of each
// is waiting on real sockets and child processes (about a third of two cores busy), so together they take the time of
// the longest lane instead of the sum. The other runs' output is held and printed after the main run's, so none is
// interleaved. Exits non-zero when any run fails. LH_TEST_SEQUENTIAL=1 runs them one after the other.
'use strict';
const { spawn } = require('child_process');
const path = require('path');

const root = path.resolve(__dirname, '..');
const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');

const children = new Set();

// live: the run's output is also written as it comes (the main run); it is kept in every case, so the failures of
// each run can be repeated at the very end, where a CI log that shows only its tail still has them.
// script: a node script of its own instead of mocha (test:nr5 picks its Node.js 22 itself).
function run(args, env, live, script) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, script ? [path.join(root, script), ...args] : [mocha, ...args], {
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

/** The runs of `npm test`; `after`: started once that run ended (it shares its lane, so at most three run at once). */
const RUNS = [
  // type checks, ESLint and Prettier: a minute of CPU at the start of their lane
  { name: 'static checks', title: 'type checks and lint (scripts/checks.js)', script: 'scripts/checks.js', args: [] },
  // the suite on Node-RED 4 but for what the other runs take (its output is written as it comes)
  {
    name: 'Node-RED 4 suite',
    args: [
      '--ignore',
      'test/coordination/**',
      '--ignore',
      'test/review/**',
      '--ignore',
      'test/browser/**',
      '--ignore',
      'test/e2e/**',
      '--ignore',
      'test/standard/**',
      '--ignore',
      'test/chaos/**',
    ],
    live: true,
  },
  // the review tests of coordination (test/review/coord-*) run here too: Node-REDs and Redis, like the rest of it
  {
    name: 'coordination suite',
    title: 'coordination suite (test/coordination, test/review/coord-*)',
    args: ['--config', '.mocharc.coordination.json'],
  },
  // the review tests on Node-RED 4 but for coordination's (about 5 to 7 minutes, which the main run took with it): the
  // cases hostile passes found and their seeded models, after the static checks
  {
    name: 'review suite',
    title: 'review tests on Node-RED 4 (test/review but test/review/coord-*)',
    args: ['test/review/*.test.ts', '--ignore', 'test/review/coord-*.test.ts'],
    after: 'static checks',
  },
  // the node tests on the oldest Node-RED package.json promises, after the review tests
  {
    name: 'Node-RED 3.1 suite',
    title: 'node tests on Node-RED 3.1 (test:nr3)',
    args: ['--config', '.mocharc.nr3.json'],
    env: { LH_NODE_RED: 'node-red-3' },
    after: 'review suite',
  },
  // Node-RED 5 on Node.js 22 (scripts/nr5.js): the node tests and the standard-install test, after the coordination
  // suite
  {
    name: 'Node-RED 5 suite',
    title: 'node tests and the standard install on Node-RED 5 under Node.js 22 (test:nr5)',
    script: 'scripts/nr5.js',
    args: [],
    after: 'coordination suite',
  },
  // Chromium, npm start, the examples and a standard Node-RED user dir (mostly waiting on child processes), after the
  // main run
  {
    name: 'browser, examples and standard Node-RED suite',
    title: 'browser, examples and standard Node-RED (test/browser, test/e2e, test/standard)',
    args: ['--config', '.mocharc.processes.json'],
    after: 'Node-RED 4 suite',
  },
  // the bounded chaos run (two Node-REDs, redis-server restarts, the simulators; about 70 s) and the chaos harness'
  // pure tests, last in the coordination suite's lane (also Node-REDs on Redis), after Node-RED 5
  {
    name: 'chaos run',
    title: 'bounded chaos run (test/chaos; npm run chaos is the long one)',
    // a named file: .mocharc.cjs adds ts-node and the secret scan, not the whole suite
    args: ['test/chaos/*.test.ts'],
    after: 'Node-RED 5 suite',
  },
];

async function main() {
  const sequential = process.env.LH_TEST_SEQUENTIAL === '1';
  const started = new Map();
  let previous = Promise.resolve();
  for (const r of RUNS) {
    const wait = sequential ? previous : r.after ? started.get(r.after) : Promise.resolve();
    const result = wait.then(() => run(r.args, r.env ?? {}, r.live === true, r.script));
    started.set(r.name, result);
    previous = result;
  }
  const results = await Promise.all(RUNS.map((r) => started.get(r.name)));
  RUNS.forEach((r, i) => {
    if (r.live) return;
    process.stdout.write(`\n--- ${r.title} ---\n`);
    process.stdout.write(results[i].output);
  });
  const what = (r) => `exit ${r.code}${r.signal ? `, ${r.signal}` : ''}`;
  const named = RUNS.map((r, i) => results[i].code !== 0 && `${r.name} (${what(results[i])})`).filter(Boolean);
  RUNS.forEach((r, i) => {
    if (results[i].code !== 0)
      process.stdout.write(`\n--- failures of the ${r.name}, repeated ---\n${failures(results[i].output)}\n`);
  });
  if (named.length > 0) {
    process.stderr.write(`\nnpm test failed: ${named.join(' and ')}\n`);
    process.exitCode = process.exitCode || 1; // set, not exit(): the held output is written out first
  }
}

void main();
