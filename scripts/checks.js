#!/usr/bin/env node
// The static checks of `npm test`: `npm run typecheck` (the runtime's and the edit dialogs' tsconfig), then `npm run
// lint` (ESLint and Prettier). scripts/run-tests.js runs this beside the test runs rather than before them: it is a
// minute of CPU that waits on no socket, and a failure fails `npm test` all the same. Exits with the first failure's code.
'use strict';
const { spawnSync } = require('child_process');
const path = require('path');

const root = path.resolve(__dirname, '..');
// npm sets npm_execpath for the scripts it runs; `npm` on PATH otherwise
const npm = process.env.npm_execpath
  ? [process.execPath, [process.env.npm_execpath]]
  : [process.platform === 'win32' ? 'npm.cmd' : 'npm', []];

for (const script of ['typecheck', 'lint']) {
  const r = spawnSync(npm[0], [...npm[1], 'run', '-s', script], { cwd: root, stdio: 'inherit' });
  const code = r.status ?? 1;
  if (code !== 0) {
    process.stderr.write(`npm run ${script} failed (exit ${code}${r.signal ? `, ${r.signal}` : ''})\n`);
    process.exit(code);
  }
  process.stdout.write(`npm run ${script}: ok\n`);
}
