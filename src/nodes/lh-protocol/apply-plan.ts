/**
 * Reading a protocol and applying a plan through the client: the checks before the first write (a run of the
 * protocol in progress, the protocol changed since the plan, a plan that does not lead to its target), the writes in
 * the plan's order (the moves in one reorder-step call), each under the plan's id and base in the audit trail, and
 * the protocol read back after them.
 */
import {
  type HeldApplyLock,
  isBusy,
  LhError,
  type LhErrorKind,
  neverReached,
  type PrepApi,
  type RunsApi,
  validationError,
} from '../../client';
import { homeOf, slot } from '../../instrument';
import { shownInLog } from '../../observe/whole-characters';
import { oneAtATime } from '../shared/one-at-a-time';
import {
  duplicateNames,
  exportDigest,
  type ExportStep,
  type InstrumentStep,
  type ProtocolExport,
  readInstrumentProtocol,
} from './export-format';
import { type Plan } from './plan';
import { type Change, changedFields, clippedFieldName, describeChange } from './plan-make';
import { originalNames, replayChanges } from './plan-replay';

export interface ProtocolRead {
  protocolId: number;
  export: ProtocolExport;
  steps: InstrumentStep[];
  digest: string;
}

export interface ApplyDeps {
  prep: PrepApi;
  runs: RunsApi;
  /** Runs one write with `why` recorded as its reason in the audit trail. */
  audited: <R>(why: Record<string, unknown>, work: () => Promise<R>) => Promise<R>;
}

export type ApplyResult =
  { outcome: 'unchanged'; applied: Change[] } | { outcome: 'applied'; applied: Change[]; protocol: ProtocolExport };

/**
 * A write refused (or failed) midway: what was applied, what was not, and what the instrument received without
 * saying whether it made it (unconfirmed). A new plan from there completes it.
 */
export class ApplyStopped extends LhError {
  constructor(
    message: string,
    kind: LhErrorKind,
    init: { operation: string; statusCode?: number; body?: unknown },
    readonly applied: Change[],
    readonly notApplied: Change[],
    readonly unconfirmed: Change[] = [],
  ) {
    super(message, { kind, ...init });
  }
}

/**
 * Whether a failed write may have been made, as the audit trail records its outcome (unknown, see the transport's
 * auditOutcomeOfError): any answer but a 4xx (a 5xx, a redirect, a 2xx whose body could not be read or was larger
 * than the limit), or none (a timeout, a connection reset, a TLS failure after a first attempt), unless nothing of it
 * left (no connection made, or its audit intent not durable in time: never sent); a 4xx is the instrument saying it
 * did not. `err` is what the client threw (not an LhError: a fault here, nothing known to be sent).
 */
function mayHaveBeenDone(err: unknown): boolean {
  if (!(err instanceof LhError)) return false;
  if (err.statusCode !== undefined) return err.statusCode < 400 || err.statusCode >= 500;
  if (neverReached(err)) return false;
  if (err.kind === 'tls') return err.attempts > 1;
  return err.kind === 'network' || err.kind === 'timeout' || err.kind === 'response';
}

export async function readProtocol(runs: RunsApi, protocolId: number, operation: string): Promise<ProtocolRead> {
  const read = readInstrumentProtocol(await runs.getProtocol(protocolId, true), operation);
  return { protocolId, export: read.export, steps: read.steps, digest: exportDigest(read.export) };
}

/** The protocol's steps must be known by name: two steps of one name are an error naming them. */
export function requireUniqueNames(read: ProtocolRead, operation: string): void {
  const dup = duplicateNames(read.export.steps);
  if (dup.length > 0) {
    throw new LhError(
      `protocol ${read.protocolId} has more than one step named ${dup
        .slice(0, 5)
        .map((n) => JSON.stringify(n))
        .join(', ')}: steps are known by name, so rename one of them (lh-steps rename) before planning`,
      { kind: 'validation', operation, field: 'steps' },
    );
  }
}

/** Refuses, before any write, while a run of the protocol is in progress (or one the instrument does not name). */
async function refuseWhileRunning(runs: RunsApi, plan: Plan, operation: string): Promise<void> {
  const status = await runs.status();
  if (!isBusy(status)) return;
  if (status.protocolId !== null && status.protocolId !== plan.protocolId) return;
  throw new LhError(
    `protocol ${plan.protocolId} is not changed while a run of it is in progress (state ${status.protocolRunState}); apply the plan once the run has ended`,
    { kind: 'busy', operation },
  );
}

function list(changes: readonly Change[]): string {
  if (changes.length === 0) return 'none';
  const shown = changes.slice(0, 10).map(describeChange).join('; ');
  return changes.length > 10 ? `${shown}; … (${changes.length} in all)` : shown;
}

/**
 * The applies under way in this process, per protocol, in the instrument's home (interface A's URL keys it, as the
 * run-start claims): the tail of each one's queue. Not per client: every lh-server node has a client of its own,
 * and two of one instrument applying at once both passed the base check and both wrote (a create made twice).
 */
const APPLYING = slot('protocol-applies', () => new Map<string, Promise<unknown>>());

/** One write of an apply; `prepare`: a read before it (its failure: nothing of this write sent). */
interface Write {
  changes: Change[];
  prepare?: () => Promise<void>;
  write: () => Promise<unknown>;
}

/**
 * An update's write. `disabled` as the step has it now (an enable or disable is a write of its own, after the
 * updates): sent, not left out, as an instrument binding the body to its step type reads a missing one as false and
 * enables the step. A PUT replaces the step's fields: those the protocol read did not show (custom liquid settings,
 * served only when asked) are read from the step first and sent back, so an apply never removes what the export
 * cannot show.
 */
function updateWrite(
  { prep, pid, operation }: { prep: PrepApi; pid: number; operation: string },
  stepId: number,
  was: ExportStep | undefined,
  c: Extract<Change, { action: 'update' }>,
  audited: (work: () => Promise<unknown>) => Promise<unknown>,
): Write {
  const { disabled: _d, ...body } = c.step;
  const disabled = was?.disabled === true;
  const shown = new Set(Object.keys(was ?? {}).map((k) => k.toLowerCase()));
  let hidden: Record<string, unknown> = {};
  return {
    changes: [c],
    prepare: async () => {
      const read = await prep.getStep(pid, stepId, true);
      const problem = stepReadProblem(read, stepId, was);
      if (problem) {
        throw new LhError(
          `${operation}: the read of step ${stepId} before its update ${problem}: nothing of the update sent (its ` +
            'fields the protocol read does not show would be lost or mixed); read the protocol and make a new plan',
          { kind: 'response', operation },
        );
      }
      hidden = hiddenFields(read, shown);
    },
    write: () => audited(() => prep.updateStep(pid, { ...hidden, ...body, disabled, id: stepId })),
  };
}

/**
 * Why a step's own read cannot be the step the check before the writes read (`was`), if it cannot: no step object (an
 * array, a string: no fields to keep, the update would drop them), another step's id, or another step type (changed
 * since the check: its fields are not the plan's step's). An id or type left out is not held against it.
 */
function stepReadProblem(read: unknown, stepId: number, was: ExportStep | undefined): string | undefined {
  if (typeof read !== 'object' || read === null || Array.isArray(read)) {
    return `answered ${Array.isArray(read) ? 'an array' : `a JSON ${typeof read}`}, not a step`;
  }
  const field = (name: string): unknown => {
    const key = Object.keys(read).find((k) => k.toLowerCase() === name);
    return key === undefined ? undefined : (read as Record<string, unknown>)[key];
  };
  const id = field('id');
  if (id !== undefined && id !== stepId) return `answered another step (id ${clip(JSON.stringify(id))})`;
  const type = field('steptype');
  const kind = (t: unknown): string => String(t).toLowerCase().replace(/step$/, '');
  if (type !== undefined && was !== undefined && kind(type) !== kind(was.stepType)) {
    return `answered a ${clip(String(type))}, not the ${was.stepType} the check read (changed since)`;
  }
  return undefined;
}

/** An instrument's value in a message: control characters shown as such, at most 60 characters. */
function clip(text: string): string {
  const chars = Array.from(shownInLog(text));
  return chars.length > 60 ? `${chars.slice(0, 60).join('')}…` : chars.join('');
}

/** Fields every step has: never carried over from a step's own read. */
const COMMON_FIELDS = new Set(['steptype', 'id', 'name', 'steporder', 'disabled', 'makenameunique']);

/**
 * The fields of a step as read on its own (custom liquid settings included) that the protocol read did not show
 * (`shown`: its keys in lower case): sent back with an update, which replaces the step's fields.
 */
function hiddenFields(step: unknown, shown: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof step !== 'object' || step === null || Array.isArray(step)) return out;
  for (const [key, value] of Object.entries(step as Record<string, unknown>)) {
    const lower = key.toLowerCase();
    if (COMMON_FIELDS.has(lower) || shown.has(lower) || value === undefined) continue;
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * After an apply stopped inside a cycle of renames (a swap: A → B while B still holds B), two steps have one name, and
 * plan refuses such a protocol: what to do, naming the steps by id; undefined when every name is unique.
 */
function sharedName(
  steps: readonly InstrumentStep[],
  changes: readonly Change[],
  applied: readonly Change[],
  id: (i: number) => number,
): string | undefined {
  const nameOf = new Map(steps.map((s) => [s.id, s.step.name]));
  const pending = new Map<number, string>(); // step id → the name a rename not applied was to give it
  changes.forEach((c, i) => {
    if (c.action === 'delete' && applied.includes(c)) nameOf.delete(id(i));
    if (c.action === 'rename') {
      if (applied.includes(c)) nameOf.set(id(i), c.name);
      else pending.set(id(i), c.name);
    }
  });
  const holders = new Map<string, number[]>();
  for (const [stepId, name] of nameOf) holders.set(name, [...(holders.get(name) ?? []), stepId]);
  const shared = [...holders].find(([, ids]) => ids.length > 1);
  if (!shared) return undefined;
  const [name, ids] = shared;
  const still = ids.find((i) => pending.has(i)) ?? ids[ids.length - 1];
  const to = pending.get(still);
  const taken = new Set(nameOf.values());
  const rename =
    to !== undefined && !taken.has(to)
      ? `rename step ${still} to ${JSON.stringify(to)}`
      : `rename step ${still} to a name no step of the protocol has`;
  return `Steps ${ids.join(' and ')} both have the name ${JSON.stringify(name)} now (the apply stopped inside a cycle of renames), and plan refuses a protocol with two steps of one name: first ${rename} (lh-steps rename), then a new plan completes it.`;
}

/**
 * An update's `fields` are what msg.applied and the audit trail's why say it changes, but the target check does not
 * read them: they must be the fields its step changes, as plan lists them (an edited list is refused, naming it).
 */
function requireTrueFields(
  steps: readonly ExportStep[],
  changes: readonly Change[],
  originals: readonly (string | undefined)[],
  operation: string,
): void {
  const byName = new Map(steps.map((s) => [s.name, s]));
  changes.forEach((c, i) => {
    if (c.action !== 'update') return;
    const was = byName.get(originals[i] as string) as ExportStep;
    const fields = changedFields(was, c.step);
    if (fields.length === c.fields.length && fields.every((f, k) => f === c.fields[k])) return;
    // field names are any text a step has (a plan's own, of any length and with line breaks): quoted and clipped
    const named = fields.slice(0, 20).map((f) => shownInLog(JSON.stringify(clippedFieldName(f))));
    const shown = fields.length > 20 ? `${named.join(', ')}, …` : named.join(', ') || 'none';
    throw validationError(
      operation,
      `plan.changes[${i}].fields`,
      `must be the fields the update changes: ${shown} (the plan was altered after it was made): nothing was written; make a new plan`,
    );
  });
}

function altered(plan: Plan, operation: string): LhError {
  return new LhError(
    `plan ${plan.id}: its changes do not lead to its target (the plan was altered after it was made): nothing was written; make a new plan`,
    { kind: 'validation', operation, field: 'plan.changes' },
  );
}

/**
 * Applies `plan` (checked by readPlan, made for this instrument and protocol). With coordination (the home's apply
 * locks) the apply holds the protocol's lock in Redis from before its base check to its end: an apply from another
 * Node-RED meanwhile is refused, writing nothing, and a lock lost midway stops this one before its next write.
 */
export async function applyPlan(deps: ApplyDeps, plan: Plan, operation: string): Promise<ApplyResult> {
  if (plan.changes.length === 0) {
    // a plan made empty has base = target: one whose changes were taken out no longer leads to its target
    if (plan.base !== plan.target) throw altered(plan, operation);
    return { outcome: 'unchanged', applied: [] };
  }
  const home = homeOf(plan.instrument);
  // two msgs applying at once never interleave their writes; the second reads the protocol after the first and is
  // refused (LH_CHANGED)
  return oneAtATime(home.slot(APPLYING), String(plan.protocolId), async () => {
    const lock = await home.applyLocks?.take(plan.protocolId, operation);
    try {
      return await applyNow(deps, plan, operation, lock);
    } finally {
      await lock?.release();
    }
  });
}

/** Why the apply's lock (with coordination) is no longer this apply's, if it is not; undefined while it holds it. */
async function lockLost(lock: HeldApplyLock | undefined, operation: string): Promise<LhError | undefined> {
  return lock?.confirm().then(
    () => undefined,
    (err: unknown) => (err instanceof LhError ? err : new LhError(String(err), { kind: 'busy', operation })),
  );
}

async function applyNow(deps: ApplyDeps, plan: Plan, operation: string, lock?: HeldApplyLock): Promise<ApplyResult> {
  await refuseWhileRunning(deps.runs, plan, operation);
  const before = await readProtocol(deps.runs, plan.protocolId, operation);
  if (before.digest !== plan.base) {
    throw new LhError(
      `protocol ${plan.protocolId} changed on the instrument since plan ${plan.id} was made (base ${plan.base.slice(0, 19)}…, now ${before.digest.slice(0, 19)}…): nothing was written; make a new plan`,
      { kind: 'changed', operation },
    );
  }
  requireUniqueNames(before, operation);
  const replayed = exportDigest(replayChanges(before.export, plan.changes, operation));
  if (replayed !== plan.target) throw altered(plan, operation);
  const originals = originalNames(before.export.steps, plan.changes, operation);
  requireTrueFields(before.export.steps, plan.changes, originals, operation);
  const idOf = new Map(before.steps.map((s) => [s.step.name, s.id]));
  const exportOf = new Map(before.steps.map((s) => [s.step.name, s.step]));
  const id = (i: number): number => idOf.get(originals[i] as string) as number;
  const why = (detail: string): Record<string, unknown> => ({
    plan: plan.id,
    base: plan.base,
    protocolId: plan.protocolId,
    change: detail,
  });
  const pid = plan.protocolId;
  const prep = deps.prep;

  const applied: Change[] = [];
  const moves = plan.changes.map((c, i) => ({ c, i })).filter((x) => x.c.action === 'move');
  const writes: Write[] = [];
  plan.changes.forEach((c, i) => {
    const one = (write: () => Promise<unknown>): void => {
      writes.push({ changes: [c], write: () => deps.audited(why(describeChange(c)), write) });
    };
    switch (c.action) {
      case 'delete':
        return one(() => prep.deleteStep(pid, id(i)));
      case 'rename':
        return one(() => prep.renameStep(pid, id(i), c.name));
      case 'update':
        return void writes.push(
          updateWrite({ prep, pid, operation }, id(i), exportOf.get(originals[i] as string), c, (w) =>
            deps.audited(why(describeChange(c)), w),
          ),
        );
      case 'enable':
      case 'disable':
        return one(() => prep.setStepDisabled(pid, id(i), c.action === 'disable'));
      case 'create':
        return one(() => prep.createStep(pid, { ...c.step, stepOrder: c.stepOrder }));
      case 'move':
        return undefined;
    }
  });
  if (moves.length > 0) {
    const items = moves.map(({ c, i }) => ({ stepId: id(i), stepOrder: (c as { stepOrder: number }).stepOrder }));
    const detail = `move ${moves.map(({ c }) => describeChange(c).slice(5)).join('; ')}`;
    writes.push({ changes: moves.map((m) => m.c), write: () => deps.audited(why(detail), () => prep.reorderSteps(pid, items)) });
  }

  /** `unconfirmed`: the changes of a write the instrument received without saying whether it made it */
  const stopped = (at: Change[], cause: LhError, unconfirmed: Change[] = []): ApplyStopped => {
    const notApplied = plan.changes.filter((c) => !applied.includes(c) && !unconfirmed.includes(c));
    const next = sharedName(before.steps, plan.changes, applied, id) ?? 'A new plan from the protocol as it is now completes it.';
    const unsure =
      unconfirmed.length > 0
        ? ` The instrument received that write but did not say whether it made it: whether it was done shows in a new plan. Not known whether applied (${unconfirmed.length}): ${list(unconfirmed)}.`
        : '';
    return new ApplyStopped(
      `apply of plan ${plan.id} stopped at ${list(at)}: ${cause.message.replace(/\.+$/, '')}.${unsure} Applied (${applied.length}): ${list(applied)}. Not applied (${notApplied.length}): ${list(notApplied)}. ${next}`,
      cause.kind,
      { operation, statusCode: cause.statusCode, body: cause.body },
      [...applied],
      notApplied,
      unconfirmed,
    );
  };
  for (const w of writes) {
    try {
      await w.prepare?.();
    } catch (err) {
      // a read: nothing of this write was sent
      throw stopped(w.changes, err instanceof LhError ? err : new LhError(String(err), { kind: 'response', operation }));
    }
    // the protocol's lock is still this apply's (with coordination): another Node-RED may write once it is lost.
    // Confirmed after the write's read, right before the write: the lock may expire or move while the read takes long
    const lost = await lockLost(lock, operation);
    if (lost) throw stopped(w.changes, lost);
    try {
      await w.write();
    } catch (err) {
      const cause = err instanceof LhError ? err : new LhError(String(err), { kind: 'response', operation });
      throw stopped(w.changes, cause, mayHaveBeenDone(err) ? w.changes : []);
    }
    applied.push(...w.changes);
  }

  // every write was made: a read back that fails says so (a flow that saw only the read's error applied the plan again)
  const after = await readProtocol(deps.runs, pid, operation).catch((err: unknown) => {
    const cause = err instanceof LhError ? err : new LhError(String(err), { kind: 'response', operation });
    throw new ApplyStopped(
      `plan ${plan.id}: every change was written, but reading protocol ${pid} back failed: ${cause.message.replace(/\.+$/, '')}. Applied (${applied.length}): ${list(applied)}. A new plan shows whether the protocol is as the plan's target (it is empty then)`,
      cause.kind,
      { operation, statusCode: cause.statusCode, body: cause.body },
      applied,
      [],
    );
  });
  if (after.digest !== plan.target) {
    throw new ApplyStopped(
      `plan ${plan.id}: every change was written, but protocol ${pid} read back differs from the plan's target (someone else changed it meanwhile, or the instrument placed a step otherwise); a new plan from here shows the difference`,
      'instrument',
      { operation },
      applied,
      [],
    );
  }
  return { outcome: 'applied', applied, protocol: after.export };
}
