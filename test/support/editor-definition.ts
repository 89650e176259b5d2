// The node definition a node's built html registers with the editor (nodes/nodes/<type>/<type>.html, as Node-RED
// serves it), read by running its script against a stub of the editor's RED and jQuery.
import assert from 'node:assert/strict';
import fs from 'fs';
import path from 'path';
import vm from 'vm';

const root = path.resolve(__dirname, '..', '..');

export interface PropertyDef {
  value?: unknown;
  type?: string;
  required?: boolean;
  validate?: (this: unknown, v: unknown, opt?: unknown) => boolean | string;
}

export interface EditorDefinition {
  category: string;
  icon?: string;
  defaults: Record<string, PropertyDef>;
  paletteLabel(this: unknown): string;
}

/** The built html of `type` (run `node scripts/build.js` first). */
export function builtHtml(type: string): string {
  return fs.readFileSync(path.join(root, 'nodes', 'nodes', type, `${type}.html`), 'utf8');
}

export function editorDefinition(type: string): EditorDefinition {
  const scripts = [...builtHtml(type).matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g)].map((m) => m[1]);
  let definition: EditorDefinition | undefined;
  const RED = {
    nodes: {
      registerType: (registered: string, def: EditorDefinition) => {
        assert.equal(registered, type, `${type}.html registers another type`);
        definition = def;
      },
    },
    validators: { number: () => () => true, regex: () => () => true, typedInput: () => () => true },
    _: (k: string) => k,
  };
  // An empty jQuery selection: no dialog is open, so validators read the node's own properties.
  const empty = { length: 0, val: () => undefined };
  const $ = Object.assign(() => empty, { fn: {} });
  for (const script of scripts) vm.runInNewContext(script, { RED, window: {}, $, jQuery: $, console, URL }); // URL: as every browser has it
  assert.ok(definition, `${type}.html registers no node type`);
  return definition;
}
