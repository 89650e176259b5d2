/**
 * The edit dialog shows a saved node as the runtime reads it: the runtime migrates every configuration it starts
 * (src/nodes/shared/migrations.ts); the dialog runs the same steps over the same table before it shows the node, so
 * a property missing from a flow (a hand-written one, an example, a 0.1 flow) shows as the runtime treats it, and
 * pressing Done stores exactly that — never a blank that would change behaviour (e.g. `listen` unticked).
 */
import { migrate, type Migrated, type MigrationTable } from '../contract/migration-steps';
import type { EditorNode } from './red';

/** The id prefix of the dialog's inputs: config nodes are edited in a tray of their own. */
export function inputPrefix(node: EditorNode): string {
  return node._def.category === 'config' ? '#node-config-input-' : '#node-input-';
}

/** The node's saved configuration: its type, version and every property of its definition. */
function savedConfig(node: EditorNode): Record<string, unknown> & { type: string } {
  const saved: Record<string, unknown> & { type: string } = { type: node.type };
  for (const key of Object.keys(node._def.defaults)) if (node[key] !== undefined) saved[key] = node[key];
  return saved;
}

/** The node migrated to the latest version of its type, by the runtime's own steps. */
export function migratedConfig(node: EditorNode, table: MigrationTable): Migrated {
  return migrate(savedConfig(node), table);
}

/**
 * Puts into the dialog's inputs every property the migration filled in or renamed (called first in
 * oneditprepare, before typed inputs are built over the plain inputs). Objects (lists) are left to the node's own
 * prepare, which gets the migrated config.
 */
export function showMigrated(node: EditorNode, migrated: Migrated): void {
  const prefix = inputPrefix(node);
  for (const key of Object.keys(node._def.defaults)) {
    const value = migrated[key];
    if (key === 'version' || value === node[key] || value === undefined || typeof value === 'object') continue;
    const input = $(prefix + key);
    if (input.attr('type') === 'checkbox') input.prop('checked', value === true || value === 'true');
    else input.val(String(value));
  }
}

/**
 * On Done (oneditsave runs before Node-RED reads the inputs back): the node takes the latest version and every
 * migrated property it lacks. Node-RED then overwrites each from its input, where the user may have changed it; a
 * property with no input (a list), or whose input reads nothing (a config node select with none chosen), keeps it.
 */
export function keepMigrated(node: EditorNode, migrated: Migrated): void {
  for (const key of Object.keys(node._def.defaults)) {
    if (key !== 'version' && node[key] === undefined && migrated[key] !== undefined) node[key] = migrated[key];
  }
  node.version = migrated.version;
}
