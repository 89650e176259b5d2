// The edit dialogs are generated from the runtime's sources at build: their defaults and version from the migration
// tables, their checks from the same rules as the client. These tests read the built html (what Node-RED serves),
// so a dialog that drifts from the runtime fails here.
import assert from 'node:assert/strict';
import fs from 'fs';
import path from 'path';

import { validate } from '../../src/client';
import { dialogDefaults, latestVersion, MIGRATIONS } from '../../src/nodes/shared/migrations';
import { DEFAULT_NOTIFICATION } from '../../src/nodes/shared/poll-messages';
import { builtHtml, editorDefinition } from '../support/editor-definition';
import { exampleFilesIn } from '../support/example-files';

const root = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  'node-red': { nodes: Record<string, string> };
};
const types = Object.keys(pkg['node-red'].nodes);

const SAMPLES = ['1', 'a.b_c~d:e-f', 'x'.repeat(200), 'x'.repeat(201), '', 'a/b', 'a b', '../x', 'é', 'a?b', 'a#b', '%2e'];

function runtimeAccepts(value: string): boolean {
  try {
    validate.errorId(value, 'errorId', 'test');
    return true;
  } catch {
    return false;
  }
}

/** A node as the editor holds it, with the given properties and the editor's text lookup. */
const editorNode = (props: Record<string, unknown>): Record<string, unknown> => ({ ...props, _: (k: string) => k });

describe('editor constants agree with the runtime', function () {
  for (const type of ['lh-answer-error', 'lh-error-log']) {
    it(`${type}: the dialog's errorId check accepts exactly what the client accepts`, function () {
      const check = editorDefinition(type).defaults.errorId.validate;
      assert.ok(check, 'errorId has a check');
      for (const sample of SAMPLES) {
        const accepted: boolean = check.call(editorNode({ errorIdType: 'str' }), sample) === true;
        // an empty field means "from msg.errorId": the dialog accepts it, the runtime checks the msg's value
        assert.equal(accepted, sample === '' || runtimeAccepts(sample), JSON.stringify(sample));
      }
    });
  }

  it("lh-error-poll: the dialog's default notification template is the runtime's", function () {
    assert.equal(dialogDefaults('lh-error-poll').template, DEFAULT_NOTIFICATION);
    assert.equal(editorDefinition('lh-error-poll').defaults.template.value, DEFAULT_NOTIFICATION);
  });

  it('every dialog carries the migration table of its own type only, as the runtime has it', function () {
    for (const type of types) {
      const table = /\}\)\((\{.*\})\);\n<\/script>/.exec(builtHtml(type))?.[1];
      assert.ok(table, `${type}: no migration table in the built html`);
      assert.deepEqual(JSON.parse(table), { [type]: MIGRATIONS[type] }, type);
      assert.equal(editorDefinition(type).defaults.version.value, latestVersion(type), `${type}: version`);
    }
  });

  it('each node has its own glyph, and the palette shows the names the README uses', function () {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const icons = new Set<string>();
    let paletteNodes = 0;
    for (const type of types) {
      const def = editorDefinition(type);
      if (def.category === 'config') continue;
      paletteNodes += 1;
      assert.equal(def.icon, `${type}.svg`, `${type}: its own glyph`);
      assert.ok(fs.existsSync(path.join(root, 'icons', `${type}.svg`)), `icons/${type}.svg`);
      icons.add(fs.readFileSync(path.join(root, 'icons', `${type}.svg`), 'utf8'));
      const catalogue = JSON.parse(
        fs.readFileSync(path.join(root, 'src', 'nodes', type, 'locales', 'en-US', `${type}.json`), 'utf8'),
      ) as {
        [t: string]: { paletteLabel: string };
      };
      const label = catalogue[type].paletteLabel;
      assert.ok(readme.includes(`| **${label}** \`${type}\` |`), `${type}: the README's node table names it "${label}"`);
    }
    assert.equal(icons.size, paletteNodes, 'no two nodes share a glyph');
  });

  it('every example node of this package carries its version and all its properties (node scripts/fill-examples.js)', function () {
    for (const { file, full } of exampleFilesIn()) {
      const nodes = JSON.parse(fs.readFileSync(full, 'utf8')) as {
        id: string;
        type: string;
        [k: string]: unknown;
      }[];
      for (const node of nodes.filter((n) => types.includes(n.type))) {
        const where = `${file}: ${node.type} ${node.id}`;
        assert.equal(node.version, latestVersion(node.type), `${where}: version`);
        for (const key of Object.keys(dialogDefaults(node.type))) assert.ok(key in node, `${where}: ${key} is missing`);
      }
    }
  });
});
