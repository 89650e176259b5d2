// Which Node-RED the node tests ran against. `npm test` runs test/nodes twice: on the newest Node-RED (devDependency
// node-red) and on the oldest one package.json promises (LH_NODE_RED=node-red-3, the alias node-red-3 = node-red@3.1.x).
import assert from 'assert';
import fs from 'fs';
import path from 'path';

import semver from 'semver';

import { NODE_RED_PACKAGE } from '../support/runtime';

const root = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { 'node-red': { version: string } };

describe(`Node-RED runtime under test (${NODE_RED_PACKAGE})`, function () {
  it('is the runtime LH_NODE_RED names, and package.json promises to support it', async function () {
    const installed = (
      JSON.parse(fs.readFileSync(require.resolve(`${NODE_RED_PACKAGE}/package.json`), 'utf8')) as { version: string }
    ).version;
    // The runtime the helper loaded (helper.init() requires it: the module cache holds it), which every node test used.
    const main = require.resolve(NODE_RED_PACKAGE);
    assert.ok(require.cache[main], `${NODE_RED_PACKAGE} was not loaded by the test helper`);
    const loaded = (require(main) as { version(): string }).version();
    assert.strictEqual(semver.coerce(loaded)?.version, semver.coerce(installed)?.version);
    assert.ok(
      semver.satisfies(semver.coerce(loaded)!, pkg['node-red'].version),
      `Node-RED ${loaded} is outside ${pkg['node-red'].version}`,
    );
    if (NODE_RED_PACKAGE === 'node-red-3') assert.strictEqual(semver.major(installed), 3);
  });

  it('takes the core tls-config node from that same runtime', function () {
    const runtimeDir = path.dirname(require.resolve(`${NODE_RED_PACKAGE}/package.json`));
    const tls = Object.keys(require.cache).filter((f) => f.endsWith(path.join('core', 'network', '05-tls.js')));
    assert.strictEqual(tls.length, 1, tls.join(', '));
    const expected = path.dirname(require.resolve('@node-red/nodes/package.json', { paths: [runtimeDir] }));
    assert.ok(tls[0].startsWith(expected + path.sep), `${tls[0]} is not in ${expected}`);
  });
});
