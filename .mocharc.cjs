// The default mocha configuration. `npx mocha test/some/file.test.ts` runs that file only: the whole suite's spec
// applies only when no test file is named on the command line (mocha adds a config's spec to the files named, so a
// .mocharc.json with a spec made every one-file run a full run).
'use strict';
const named = process.argv.slice(2).some((arg) => /\.(test\.)?ts$/.test(arg) || /^test\//.test(arg));
module.exports = {
  require: ['ts-node/register/transpile-only', './test/support/secret-scan.ts'],
  extension: ['ts'],
  timeout: 20000,
  recursive: true,
  ...(named ? {} : { spec: ['test/**/*.test.ts'] }),
};
