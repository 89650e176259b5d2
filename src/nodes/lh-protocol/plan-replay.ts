/**
 * What a plan's changes do to a protocol, worked out without the instrument: which step each change acts on (by the
 * name it had when the plan was made) and the protocol they lead to, with the instrument's semantics (a create at
 * its stepOrder, the moves of one reorder-step call placed together). Apply uses it to check, before writing, that a
 * plan leads to its target (a plan edited after planning is refused); the tests use it as the model. Pure.
 */
import { validationError } from '../../client';
import { canonicalStep, type ExportStep, type ProtocolExport } from './export-format';
import { type Change } from './plan-make';

/**
 * For each change, the name its step had when the plan was read (undefined for a create). A change that names no
 * such step, or a step deleted or acted on twice the same way, does not fit the protocol: an error naming it.
 */
export function originalNames(
  current: readonly ExportStep[],
  changes: readonly Change[],
  operation: string,
): (string | undefined)[] {
  const names = new Set(current.map((s) => s.name));
  const renamedTo = new Map<string, string>();
  const deleted = new Set<string>();
  for (const c of changes) {
    if (c.action === 'rename') renamedTo.set(c.name, c.from);
    if (c.action === 'delete') deleted.add(c.name);
  }
  const used = new Set<string>();
  return changes.map((c, i) => {
    const at = `plan.changes[${i}]`;
    if (c.action === 'create') {
      if (names.has(c.name) && !deleted.has(c.name) && ![...renamedTo.values()].includes(c.name)) {
        throw validationError(operation, `${at}.name`, `creates "${c.name}", which the protocol already has`);
      }
      return undefined;
    }
    const original = c.action === 'delete' ? c.name : c.action === 'rename' ? c.from : (renamedTo.get(c.name) ?? c.name);
    if (!names.has(original))
      throw validationError(operation, `${at}.name`, `names step "${original}", which the protocol does not have`);
    if (c.action !== 'delete' && deleted.has(original)) {
      throw validationError(operation, `${at}.name`, `acts on step "${original}", which the plan deletes`);
    }
    const key = `${c.action === 'enable' ? 'disable' : c.action}\u0000${original}`;
    if (used.has(key)) throw validationError(operation, at, `${c.action}s step "${original}" a second time`);
    used.add(key);
    return original;
  });
}

interface Slot {
  original?: string;
  step: ExportStep;
}

function ownOf(step: ExportStep): Record<string, unknown> {
  const { name: _n, stepType: _t, disabled: _d, ...own } = step;
  return own;
}

/** The protocol once every change is applied, as apply writes them. Throws as originalNames does. */
export function replayChanges(current: ProtocolExport, changes: readonly Change[], operation = 'plan'): ProtocolExport {
  const originals = originalNames(current.steps, changes, operation);
  let slots: Slot[] = current.steps.map((s) => ({ original: s.name, step: s }));
  const slotOf = (i: number): Slot => slots.find((s) => s.original !== undefined && s.original === originals[i]) as Slot;
  const moves: { slot: Slot; stepOrder: number }[] = [];
  changes.forEach((c, i) => {
    switch (c.action) {
      case 'delete':
        slots = slots.filter((s) => s !== slotOf(i));
        break;
      case 'rename': {
        const slot = slotOf(i);
        slot.step = canonicalStep(c.name, slot.step.stepType, slot.step.disabled, ownOf(slot.step));
        break;
      }
      case 'update': {
        const slot = slotOf(i);
        slot.step = canonicalStep(c.step.name, c.step.stepType, slot.step.disabled, ownOf(c.step));
        break;
      }
      case 'enable':
      case 'disable': {
        const slot = slotOf(i);
        slot.step = canonicalStep(slot.step.name, slot.step.stepType, c.action === 'disable', ownOf(slot.step));
        break;
      }
      case 'create':
        slots.splice(Math.min(c.stepOrder - 1, slots.length), 0, { step: c.step });
        break;
      case 'move':
        moves.push({ slot: slotOf(i), stepOrder: c.stepOrder });
        break;
    }
  });
  if (moves.length > 0) {
    const moving = new Set(moves.map((m) => m.slot));
    const result = slots.filter((s) => !moving.has(s));
    for (const m of [...moves].sort((a, b) => a.stepOrder - b.stepOrder)) {
      result.splice(Math.min(m.stepOrder - 1, result.length), 0, m.slot);
    }
    slots = result;
  }
  return { name: current.name, steps: slots.map((s) => s.step) };
}
