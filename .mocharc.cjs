// The default mocha configuration. `npx mocha test/some/file.test.ts` runs that file only: the whole suite's spec
// applies only when no test file or folder is named on the command line (mocha adds a config's spec to the files
// named, so a .mocharc.json with a spec made every one-file run a full run).
'use strict';
const fs = require('fs');

/** Options whose value is the next argument (their values are never test files to run). */
const WITH_VALUE = new Set(['--ignore', '--exclude', '--config', '--grep', '-g', '--fgrep', '-f', '--require', '-r']);
WITH_VALUE.add('--reporter').add('-R').add('--timeout').add('-t').add('--extension').add('--package').add('--jobs');

function namesFiles(args) {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (WITH_VALUE.has(arg)) i++;
    else if (arg === '--spec') return true;
    else if (!arg.startsWith('-') && (fs.existsSync(arg) || /[*?]/.test(arg))) return true;
  }
  return false;
}

module.exports = {
  require: ['ts-node/register/transpile-only', './test/support/secret-scan.ts'],
  extension: ['ts'],
  timeout: 20000,
  recursive: true,
  ...(namesFiles(process.argv.slice(2)) ? {} : { spec: ['test/**/*.test.ts'] }),
};
