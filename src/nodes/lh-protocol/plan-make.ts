/**
 * The planner: the changes that turn the instrument's protocol into the desired one with the fewest writes. Pure.
 *
 * Steps are matched by name (a desired step's `renamedFrom` claims the step of that name first; a step whose rename
 * was already applied is found under its new name, so a plan made after an interrupted apply completes it). An
 * unchanged step is not touched; a field change is one update; a reorder moves only the kept steps outside one
 * longest run already in order (a longest increasing subsequence), all in one reorder-step call; a new step is
 * created at its place (POST with stepOrder), so it never needs a move.
 *
 * The changes are listed in the order apply writes them (the safe order):
 *   1. delete   steps that are not wanted (frees their names for renames and creates),
 *   2. rename   a rename whose new name another kept step still holds waits until that one is renamed away
 *               (in a cycle of renames, a step holds a name another one has for a moment),
 *   3. update   a step's type and own fields (one PUT, name as desired, disabled as the step has it now),
 *   4. enable / disable,
 *   5. create   each new step at its place among the steps already in order (stepOrder of the POST),
 *   6. move     the kept steps outside the longest run in order, in one reorder-step call of {stepId, stepOrder}
 *               with their final places (the instrument places them together; every other step keeps its order).
 */
import { clippedText, shownInLog } from '../../observe/whole-characters';
import { asExportStep, type DesiredStep, type ExportStep, ownFieldsText, type ProtocolExport } from './export-format';

export type Change =
  | { action: 'delete'; name: string }
  | { action: 'rename'; name: string; from: string }
  | { action: 'update'; name: string; fields: string[]; step: ExportStep }
  | { action: 'enable'; name: string }
  | { action: 'disable'; name: string }
  | { action: 'create'; name: string; stepOrder: number; step: ExportStep }
  | { action: 'move'; name: string; stepOrder: number };

export type ChangeAction = Change['action'];
export const CHANGE_ACTIONS: readonly ChangeAction[] = ['delete', 'rename', 'update', 'enable', 'disable', 'create', 'move'];

export interface PlannedChanges {
  changes: Change[];
  /** for each desired step, the index of the current step it keeps, or -1 (created) */
  match: number[];
  /** the protocol as it will be once every change is applied */
  target: ProtocolExport;
}

/**
 * For each desired step, the index of the current step it keeps (or -1: created). With `renamesFirst`, a step's
 * `renamedFrom` claims first (the rename is still to be made), then names match among the steps not yet claimed;
 * otherwise names match first (the renames were made already: the plan after an apply, or after one that stopped
 * midway), then `renamedFrom` among the steps not yet claimed.
 */
export function matchSteps(current: readonly ExportStep[], desired: readonly DesiredStep[], renamesFirst = true): number[] {
  const byName = new Map(current.map((s, i) => [s.name, i]));
  const claimed = new Set<number>();
  const match = desired.map(() => -1);
  const claim = (i: number, name: string | undefined): void => {
    const found = name === undefined ? undefined : byName.get(name);
    if (match[i] < 0 && found !== undefined && !claimed.has(found)) {
      match[i] = found;
      claimed.add(found);
    }
  };
  const passes = renamesFirst ? ['from', 'name'] : ['name', 'from'];
  for (const pass of passes) desired.forEach((d, i) => claim(i, pass === 'from' ? d.renamedFrom : d.name));
  return match;
}

/** Indexes (into `values`) of one longest strictly increasing subsequence; the earliest-ending one on ties. */
export function longestIncreasingRun(values: readonly number[]): number[] {
  const tails: number[] = []; // tails[k]: index of the smallest tail of an increasing run of length k+1
  const previous: number[] = values.map(() => -1);
  values.forEach((value, i) => {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (values[tails[mid]] < value) lo = mid + 1;
      else hi = mid;
    }
    previous[i] = lo > 0 ? tails[lo - 1] : -1;
    tails[lo] = i;
  });
  const run: number[] = [];
  for (let i = tails.length > 0 ? tails[tails.length - 1] : -1; i >= 0; i = previous[i]) run.push(i);
  return run.reverse();
}

/** Renames in an order where none takes a name another kept step still holds (cycles: in the given order). */
function renameOrder(renames: { from: string; to: string }[]): { from: string; to: string }[] {
  const pending = [...renames];
  const out: { from: string; to: string }[] = [];
  while (pending.length > 0) {
    const held = new Set(pending.map((r) => r.from));
    const free = pending.findIndex((r) => !held.has(r.to));
    const next = pending.splice(free >= 0 ? free : 0, 1)[0];
    out.push(next);
  }
  return out;
}

/** What differs between two versions of a step besides its name and disabled: its type and own fields, by name. */
export function changedFields(from: ExportStep, to: ExportStep): string[] {
  const fields: string[] = [];
  if (from.stepType !== to.stepType) fields.push('stepType');
  const skip = new Set(['name', 'stepType', 'disabled']);
  const keys = new Set([...Object.keys(from), ...Object.keys(to)].filter((k) => !skip.has(k)));
  for (const key of [...keys].sort()) {
    if (JSON.stringify(from[key]) !== JSON.stringify(to[key])) fields.push(key);
  }
  return fields;
}

/**
 * The changes from `current` (the instrument's export, unique names) to `desired` (checked by readDesired). Both
 * readings of `renamedFrom` (still to be made, or made already) lead to the desired protocol; the one with fewer
 * writes is taken, the renames still to be made on a tie. So a plan made after an apply is empty, also when a
 * step took the old name of another one (renames in a chain).
 */
export function planChanges(current: ProtocolExport, desired: readonly DesiredStep[]): PlannedChanges {
  const renames = planFor(current, desired, matchSteps(current.steps, desired, true));
  const done = planFor(current, desired, matchSteps(current.steps, desired, false));
  return writeCount(done.changes) < writeCount(renames.changes) ? done : renames;
}

function planFor(current: ProtocolExport, desired: readonly DesiredStep[], match: number[]): PlannedChanges {
  const kept = new Set(match.filter((m) => m >= 0));
  const changes: Change[] = [];

  current.steps.forEach((s, i) => {
    if (!kept.has(i)) changes.push({ action: 'delete', name: s.name });
  });

  const renames: { from: string; to: string }[] = [];
  desired.forEach((d, i) => {
    const m = match[i];
    if (m >= 0 && current.steps[m].name !== d.name) renames.push({ from: current.steps[m].name, to: d.name });
  });
  for (const r of renameOrder(renames)) changes.push({ action: 'rename', name: r.to, from: r.from });

  desired.forEach((d, i) => {
    const m = match[i];
    if (m < 0) return;
    const was = current.steps[m];
    const step = asExportStep(d);
    if (was.stepType !== step.stepType || ownFieldsText(was) !== ownFieldsText(step)) {
      changes.push({ action: 'update', name: d.name, fields: changedFields(was, step), step });
    }
  });
  desired.forEach((d, i) => {
    const m = match[i];
    if (m >= 0 && current.steps[m].disabled !== d.disabled)
      changes.push({ action: d.disabled ? 'disable' : 'enable', name: d.name });
  });

  // order: the kept steps in their current order, by their desired place; the longest run in order stays
  const keptInCurrentOrder = desired
    .map((_, i) => i)
    .filter((i) => match[i] >= 0)
    .sort((a, b) => match[a] - match[b]);
  const run = new Set(longestIncreasingRun(keptInCurrentOrder).map((k) => keptInCurrentOrder[k]));
  const placed = new Set(run);
  const working = [...keptInCurrentOrder]; // desired indexes, in the order the protocol has them after deletes
  desired.forEach((d, i) => {
    if (match[i] >= 0) return;
    let before = -1;
    for (let j = i - 1; j >= 0; j--) {
      if (placed.has(j)) {
        before = working.indexOf(j);
        break;
      }
    }
    working.splice(before + 1, 0, i);
    placed.add(i);
    changes.push({ action: 'create', name: d.name, stepOrder: before + 2, step: asExportStep(d) });
  });
  desired.forEach((d, i) => {
    if (match[i] >= 0 && !run.has(i)) changes.push({ action: 'move', name: d.name, stepOrder: i + 1 });
  });

  return { changes, match, target: { name: current.name, steps: desired.map(asExportStep) } };
}

/** How many writes apply makes for these changes: one each, and one reorder-step call for all the moves. */
export function writeCount(changes: readonly Change[]): number {
  const moves = changes.filter((c) => c.action === 'move').length;
  return changes.length - moves + (moves > 0 ? 1 : 0);
}

/** A field name as a message shows it: at most 60 whole characters, then "…" (a step's key is any text it has). */
export function clippedFieldName(name: string): string {
  return clippedText(name, 60);
}

/** One line per change, for a notification or a review: `rename "Mix" → "Mix well"`. */
export function describeChange(change: Change): string {
  const name = JSON.stringify(change.name);
  switch (change.action) {
    case 'rename':
      return `rename ${JSON.stringify(change.from)} → ${name}`;
    case 'update': {
      // a step's own keys come from the desired document or the instrument: clipped, and no line break reaches a log
      const fields = change.fields.slice(0, 20).map((f) => shownInLog(clippedFieldName(f)));
      return `update ${name}: ${fields.join(', ')}${change.fields.length > 20 ? ', …' : ''}`;
    }
    case 'create':
      return `create ${name} (${change.step.stepType}) at ${change.stepOrder}`;
    case 'move':
      return `move ${name} to ${change.stepOrder}`;
    default:
      return `${change.action} ${name}`;
  }
}
