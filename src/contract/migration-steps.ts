/**
 * The step machinery of the versioned config migrations, with no import: the runtime (migrations.ts) and the edit
 * dialogs (src/editor, bundled into each node's html at build) run this same code over the same tables, so a dialog
 * shows a saved configuration exactly as the runtime will read it.
 */
import { type TransformName, TRANSFORMS } from './migration-transforms';

export interface MigrationStep {
  /** The version a configuration has after this step. */
  version: number;
  /** Old property name → new name; applied first (only when the new one is not already set). */
  renames?: Readonly<Record<string, string>>;
  /** Properties missing after the renames take these values (the dialog's defaults at this version). */
  defaults?: Readonly<Record<string, unknown>>;
  /** Reshapes properties whose form changed (applied to the copy after the renames, before the defaults), by name. */
  transform?: TransformName;
}

export type MigrationTable = Readonly<Record<string, readonly MigrationStep[]>>;

/** The version a configuration of `type` has once migrated (0 for a type without steps). */
export function latestVersion(type: string, table: MigrationTable): number {
  const steps = table[type] ?? [];
  return steps.length > 0 ? steps[steps.length - 1].version : 0;
}

/** The dialog's defaults of `type` at its latest version (every step's defaults, later steps winning). */
export function dialogDefaults(type: string, table: MigrationTable): Record<string, unknown> {
  return Object.assign({}, ...(table[type] ?? []).map((s) => s.defaults ?? {})) as Record<string, unknown>;
}

/** The saved version: a whole number >= 0 (a string from a hand-written flow too); none or nonsense counts as 0. */
export function savedVersion(config: Record<string, unknown>): number {
  const v = Number(config.version);
  return config.version !== undefined && config.version !== '' && Number.isInteger(v) && v >= 0 ? v : 0;
}

/** A migrated configuration: its version, and the properties the steps filled in. */
export type Migrated = { version: number } & Record<string, unknown>;

/**
 * Applies one step to a copy of `config`. The copy keeps non-enumerable properties: the runtime passes a node its
 * flow (`_flow`, `_alias`) that way.
 */
export function applyStep<T extends Record<string, unknown>>(config: T, step: MigrationStep): T & Migrated {
  const out = Object.defineProperties({}, Object.getOwnPropertyDescriptors(config)) as Record<string, unknown>;
  for (const [from, to] of Object.entries(step.renames ?? {})) {
    if (from in out && out[to] === undefined) out[to] = out[from];
    delete out[from];
  }
  if (step.transform) TRANSFORMS[step.transform](out);
  for (const [key, value] of Object.entries(step.defaults ?? {})) {
    if (out[key] === undefined) out[key] = structuredClone(value);
  }
  out.version = step.version;
  return out as T & Migrated;
}

/**
 * `config` brought to the latest version of its type: every step newer than its saved version, in order. A
 * configuration of a newer version than this package knows (a downgrade) is left as it is.
 */
export function migrate<T extends Record<string, unknown> & { type: string }>(config: T, table: MigrationTable): T & Migrated {
  const from = savedVersion(config);
  let out = config as T & Migrated;
  for (const step of table[config.type] ?? []) if (step.version > from) out = applyStep(out, step);
  return out;
}
