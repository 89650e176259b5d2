#!/usr/bin/env node
'use strict';
// Fills every node of this package in examples/*.json with its `version` and every property of its type, from the
// runtime's migration tables (the same migration the runtime applies when it starts a node, and the edit dialog
// when it opens one). A filled node is left as it is, so running this again changes nothing. Run after a build:
//   node scripts/build.js && node scripts/fill-examples.js
// Writes each file in the examples' own layout: one node a line.
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const migrationsJs = path.join(root, 'nodes', 'nodes', 'shared', 'migrations.js');
if (!fs.existsSync(migrationsJs)) {
  console.error('fill-examples: nodes/ is not built; run `node scripts/build.js` first');
  process.exit(1);
}
const { migrate, MIGRATIONS } = require(migrationsJs);

/** The example's text: `[`, each node on its own line, `]`. */
function layout(nodes) {
  return '[\n' + nodes.map((n) => '  ' + JSON.stringify(n)).join(',\n') + '\n]\n';
}

/** A node of this package, migrated; any other node as it is. */
function filled(node) {
  return Object.prototype.hasOwnProperty.call(MIGRATIONS, node.type) ? { ...migrate(node) } : node;
}

let changed = 0;
// examples/: Import > Examples (core nodes and this package only); examples-extra/: those needing another package
for (const { file, full } of ['examples', 'examples-extra'].flatMap((dir) =>
  fs
    .readdirSync(path.join(root, dir))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ file: `${dir}/${f}`, full: path.join(root, dir, f) })),
)) {
  const before = fs.readFileSync(full, 'utf8');
  const after = layout(JSON.parse(before).map(filled));
  if (after !== before) {
    fs.writeFileSync(full, after);
    changed += 1;
    console.log(`fill-examples: ${file}`);
  }
}
console.log(`fill-examples: ${changed} file(s) filled`);
