/**
 * The part of the Node-RED editor the edit dialogs use, typed here (the editor's own type package pulls in the
 * runtime's types). jQuery's types come from @types/jquery.
 */
import type { MigrationTable } from '../contract/migration-steps';

/** A node as the editor holds it while its dialog is open: its saved properties, its definition, its texts. */
export interface EditorNode {
  id: string;
  type: string;
  name?: string;
  credentials?: Record<string, unknown>;
  _def: { category?: string; defaults: Record<string, PropertyDef> };
  _(key: string, args?: Record<string, unknown>): string;
  [property: string]: unknown;
}

/** A property check: true when valid; with `opt` given, the message instead of false (Node-RED >= 3). */
export type Validator = (this: EditorNode, value: unknown, opt?: unknown) => boolean | string;

/** One entry of a node definition's `defaults`. */
export interface PropertyDef {
  value?: unknown;
  required?: boolean;
  type?: string;
  validate?: Validator;
}

/** What `RED.nodes.registerType` takes (the subset this package uses). */
export interface NodeDefinition {
  category: string;
  color?: string;
  defaults: Record<string, PropertyDef>;
  credentials?: Record<string, { type: 'text' | 'password' }>;
  inputs?: 0 | 1;
  outputs?: number;
  icon?: string;
  outputLabels?: (this: EditorNode, index: number) => string;
  paletteLabel: (this: EditorNode) => string;
  label: (this: EditorNode) => string;
  labelStyle?: (this: EditorNode) => string;
  oneditprepare?: (this: EditorNode) => void;
  oneditsave?: (this: EditorNode) => void;
  oneditresize?: (this: EditorNode, size: { height: number }) => void;
}

interface EditorRed {
  nodes: { registerType(type: string, definition: NodeDefinition): void };
  validators: {
    number(): Validator;
    regex(pattern: RegExp): Validator;
    typedInput(typeField: string): Validator;
  };
  settings: { context?: { stores?: string[] } };
}

export interface TypedInputOptions {
  default: string;
  types: string[];
  typeField: string | JQuery;
}

interface EditableListOptions<T> {
  addItem(row: JQuery, index: number, item: T): void;
  sortable?: boolean;
  removable?: boolean;
}

declare global {
  const RED: EditorRed;

  interface JQuery {
    typedInput(options: TypedInputOptions): JQuery;
    typedInput(method: 'type' | 'value'): string;
    typedInput(method: 'type' | 'value', value: string): JQuery;
    editableList<T>(options: EditableListOptions<T>): JQuery;
    editableList<T>(method: 'addItem', item: T): JQuery;
    editableList(method: 'items'): JQuery;
    editableList(method: 'height', height: number): JQuery;
  }
}

/**
 * The migration tables of this node type, put into the bundle by scripts/build.js from the runtime's own
 * (src/nodes/shared/migrations.ts): the one source of every dialog's defaults and version.
 */
declare const LH_MIGRATIONS: MigrationTable;

export function migrationTable(): MigrationTable {
  return LH_MIGRATIONS;
}
