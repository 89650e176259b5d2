/**
 * Registers a node type of this package with the editor. What every node shares is here once: the palette
 * category and colour, `defaults` and `version` generated from the runtime's migration table, the lh-server row,
 * labels, typed inputs, and the dialog's migration of a saved node.
 */
import { dialogDefaults, latestVersion, type Migrated } from '../contract/migration-steps';
import { keepMigrated, migratedConfig, showMigrated } from './dialog-migration';
import { type TypedField, typedField } from './fields';
import { type EditorNode, migrationTable, type NodeDefinition, type PropertyDef, type Validator } from './red';

export const CATEGORY = 'liquid handler';
const COLOR = '#a6bbcf';

/** What a property adds to its table default: checks, a config node type, a value the table leaves out on purpose. */
export type PropertyRule = Omit<PropertyDef, 'validate'> & { validate?: Validator };

export interface NodeSpec {
  /** 'config' for lh-server; every other node is in the palette's "liquid handler" category. */
  category?: 'config';
  icon?: string;
  inputs?: 0 | 1;
  outputs?: number;
  /** Keys under <type>.outputs. of each output's label. */
  outputLabels?: string[];
  /** Whether the node picks an lh-server (default: yes, required; 'optional': may be left empty). */
  server?: boolean | 'optional';
  /** Per property: checks, or a whole entry for a property the table leaves out (a required one). */
  rules?: Record<string, PropertyRule>;
  credentials?: NodeDefinition['credentials'];
  /** Typed inputs ("from msg" rows): property → default type and types. */
  typed?: Record<string, TypedField>;
  /** The workspace label (default: the name, else the palette label). */
  label?: (this: EditorNode) => string;
  /** The rest of oneditprepare, given the saved config as migrated (what the dialog shows). */
  prepare?: (this: EditorNode, config: Migrated) => void;
  save?: (this: EditorNode) => void;
  resize?: (this: EditorNode, size: { height: number }) => void;
}

/** The `defaults` of a node type: the table's defaults at its latest version, the version, the server row, the rules. */
export function nodeDefaults(type: string, spec: Pick<NodeSpec, 'server' | 'rules'>): Record<string, PropertyDef> {
  const table = migrationTable();
  const defaults: Record<string, PropertyDef> = { version: { value: latestVersion(type, table) } };
  if (spec.server !== false) defaults.server = { value: '', type: 'lh-server', required: spec.server !== 'optional' };
  for (const [key, value] of Object.entries(dialogDefaults(type, table))) defaults[key] = { value };
  for (const [key, rule] of Object.entries(spec.rules ?? {})) {
    const value = key in defaults ? defaults[key].value : rule.value;
    defaults[key] = { ...rule, ...(value === undefined ? {} : { value }) };
  }
  return defaults;
}

/** The text of `key` under the node type's own catalogue. */
export function text(node: EditorNode, key: string, args?: Record<string, unknown>): string {
  return node._(node.type + '.' + key, args);
}

/** A label naming the chosen operation ("msg" or none: `fallback`, by default the palette label). */
export function operationLabel(fallback = 'paletteLabel'): (this: EditorNode) => string {
  return function () {
    if (this.name) return this.name;
    const op = typeof this.operation === 'string' && this.operation !== 'msg' ? this.operation : '';
    return op ? text(this, 'operation.' + op) : text(this, fallback);
  };
}

export function registerNode(type: string, spec: NodeSpec): void {
  const table = migrationTable();
  let migrated: Migrated | undefined;
  const definition: NodeDefinition = {
    category: spec.category ?? CATEGORY,
    defaults: nodeDefaults(type, spec),
    paletteLabel() {
      return text(this, 'paletteLabel');
    },
    label:
      spec.label ??
      function () {
        return this.name || text(this, 'paletteLabel');
      },
    oneditprepare() {
      migrated = migratedConfig(this, table);
      showMigrated(this, migrated);
      for (const [key, field] of Object.entries(spec.typed ?? {})) typedField(key, field);
      spec.prepare?.call(this, migrated);
    },
    oneditsave() {
      spec.save?.call(this);
      if (migrated) keepMigrated(this, migrated);
    },
  };
  if (spec.category !== 'config') {
    Object.assign(definition, {
      color: COLOR,
      inputs: spec.inputs ?? 1,
      outputs: spec.outputs ?? 1,
      labelStyle(this: EditorNode) {
        return this.name ? 'node_label_italic' : '';
      },
    });
  }
  if (spec.icon) definition.icon = spec.icon;
  if (spec.credentials) definition.credentials = spec.credentials;
  const labels = spec.outputLabels;
  if (labels) {
    definition.outputLabels = function (i) {
      return text(this, 'outputs.' + labels[i]);
    };
  }
  if (spec.resize) definition.oneditresize = spec.resize;
  RED.nodes.registerType(type, definition);
}
