/**
 * Protocols and their ordered steps (4.1).
 *
 * Choices where interfaces.md is silent: step ids are unique across protocols (database ids); stepOrder is
 * 1-based and kept dense (1..n) after every change; `makeNameUnique` is a request flag and never stored;
 * without it a duplicate name is allowed. Unknown variant fields are stored and returned exactly as sent; the variant
 * fields public clients show (STEP_VARIANT_FIELDS) are checked for their type (400 naming the field). While a run of a
 * protocol is in progress its steps cannot be changed: every write to them is refused with 409 naming the run
 * (`editGuard`, wired to the run machine), as the instrument compiles a protocol when its run is created.
 */
import { STEP_VARIANT_FIELDS, stepFieldProblem } from '../contract/instrument-contract';
import {
  field,
  FieldErrors,
  isInt32,
  isObject,
  type JsonObject,
  optionalBoolean,
  optionalInt32,
  parseBoolQuery,
  parseIntQuery,
  requireBoolean,
  requireInt32,
  requireObject,
  requireString,
} from './json-fields';
import { badRequest, notFound, validationProblem } from './problem';
import { type Protocol, type Step, STEP_TYPES, type StepSummary, type StepType } from './types';

const COMMON_FIELDS = ['stepType', 'id', 'name', 'stepOrder', 'disabled', 'makeNameUnique'];

export class StepStore {
  readonly protocols = new Map<number, Protocol>();
  /** lenient (the default): step types are also accepted without the `Step` suffix (`TransferSamples`) */
  lenient = false;
  /** Throws (409) when the protocol's steps may not be changed now: a run of it is in progress. */
  editGuard: (protocolId: number) => void = () => undefined;
  private nextProtocolId = 1;
  private nextStepId = 1;

  clear(): void {
    this.protocols.clear();
    this.nextProtocolId = 1;
    this.nextStepId = 1;
  }

  /** Protocol 1 "Demo protocol" with three steps, protocol 2 "Empty protocol". */
  seed(): void {
    const demo = this.addProtocol('Demo protocol');
    this.create(demo, {
      stepType: 'PauseStep',
      name: 'Pause for plate check',
      duration: 30,
      message: 'Check the plate',
      pauseForSetDuration: true,
    });
    this.create(demo, {
      stepType: 'AddReagentStep',
      name: 'Add buffer',
      destinations: [{ labware: 'Plate1', wells: 'A1:H12' }],
      multiDispense: false,
      liquidLabwareGroupId: 1,
    });
    this.create(demo, {
      stepType: 'HeatShakeStep',
      name: 'Incubate',
      platePosition: 'HeaterShaker1',
      heat: true,
      shake: true,
      rpm: 800,
      temperature: 37,
      duration: 600,
      heatStartOptions: 'WaitForTemperature',
    });
    this.addProtocol('Empty protocol');
  }

  addProtocol(name = `Protocol ${this.nextProtocolId}`): number {
    const id = this.nextProtocolId++;
    this.protocols.set(id, { id, name, steps: [] });
    return id;
  }

  protocol(protocolId: number): Protocol {
    const p = this.protocols.get(protocolId);
    if (!p) throw notFound(`Protocol ${protocolId} was not found.`);
    return p;
  }

  /** The protocol, when its steps may be changed now (editGuard). */
  private writable(protocolId: number): Protocol {
    const p = this.protocol(protocolId);
    this.editGuard(protocolId);
    return p;
  }

  step(protocolId: number, stepId: number): Step {
    const s = this.protocol(protocolId).steps.find((x) => x.id === stepId);
    if (!s) throw notFound(`Step ${stepId} was not found in protocol ${protocolId}.`);
    return s;
  }

  list(protocolId: number, query: Record<string, string>): Array<Step | StepSummary> {
    const p = this.protocol(protocolId);
    const offset = parseIntQuery(query, 'offset', 0);
    const limit = parseIntQuery(query, 'limit', 50);
    const full = parseBoolQuery(query, 'includeFullStepData', true);
    const liquids = parseBoolQuery(query, 'includeCustomLiquidSettings', false);
    const page = sorted(p.steps).slice(offset, offset + limit);
    return page.map((s) => (full ? withLiquids(copy(s), liquids) : summary(s)));
  }

  /** GET step/{stepId}?includeCustomLiquidSettings */
  get(protocolId: number, stepId: number, query: Record<string, string> = {}): Step {
    return withLiquids(copy(this.step(protocolId, stepId)), parseBoolQuery(query, 'includeCustomLiquidSettings', false));
  }

  create(protocolId: number, body: unknown): Step {
    const p = this.writable(protocolId);
    const obj = requireObject(body);
    const errors = new FieldErrors();
    const stepType = errors.check(() => readStepType(obj, this.lenient));
    const name = errors.check(() => requireString(obj, 'name', { nonEmpty: true }));
    const disabled = errors.check(() => optionalBoolean(obj, 'disabled'));
    const stepOrder = errors.check(() => optionalInt32(obj, 'stepOrder'));
    const unique = errors.check(() => optionalBoolean(obj, 'makeNameUnique'));
    errors.check(() => optionalInt32(obj, 'id'));
    if (stepOrder !== undefined && stepOrder < 1) errors.add('stepOrder', 'stepOrder must be 1 or greater.');
    if (stepType !== undefined) checkVariantFields(obj, stepType, errors);
    errors.throwIfAny();
    const finalName = unique ? uniqueName(p, name as string) : (name as string);
    const step: Step = {
      stepType: stepType as StepType,
      id: this.nextStepId++,
      name: finalName,
      stepOrder: p.steps.length + 1,
      disabled: disabled ?? false,
      ...variantFields(obj),
    };
    p.steps.push(step);
    if (stepOrder !== undefined) move(p, step, stepOrder);
    return copy(step);
  }

  /** PUT step: the body's id names the step; the body replaces its fields (stepOrder kept unless given). */
  update(protocolId: number, body: unknown): Step {
    const p = this.writable(protocolId);
    const obj = requireObject(body);
    const errors = new FieldErrors();
    const id = errors.check(() => requireInt32(obj, 'id'));
    const stepType = field(obj, 'stepType') === undefined ? undefined : errors.check(() => readStepType(obj, this.lenient));
    const name =
      field(obj, 'name') === undefined ? undefined : errors.check(() => requireString(obj, 'name', { nonEmpty: true }));
    const disabled = errors.check(() => optionalBoolean(obj, 'disabled'));
    const stepOrder = errors.check(() => optionalInt32(obj, 'stepOrder'));
    errors.check(() => optionalBoolean(obj, 'makeNameUnique'));
    if (stepOrder !== undefined && stepOrder < 1) errors.add('stepOrder', 'stepOrder must be 1 or greater.');
    const known = id === undefined ? undefined : p.steps.find((x) => x.id === id);
    const typeAfter = stepType ?? known?.stepType;
    if (typeAfter !== undefined) checkVariantFields(obj, typeAfter, errors);
    errors.throwIfAny();
    const old = this.step(protocolId, id as number);
    const unique = optionalBoolean(obj, 'makeNameUnique');
    let newName = name ?? old.name;
    if (unique && name !== undefined && name !== old.name) newName = uniqueName(p, name, old.id);
    const replaced: Step = {
      stepType: stepType ?? old.stepType,
      id: old.id,
      name: newName,
      stepOrder: old.stepOrder,
      disabled: disabled ?? old.disabled,
      ...variantFields(obj),
    };
    const index = p.steps.indexOf(old);
    p.steps[index] = replaced;
    if (stepOrder !== undefined) move(p, replaced, stepOrder);
    return copy(replaced);
  }

  /** PUT reorder-step: [{stepId, stepOrder}], applied in order, then renumbered 1..n. */
  reorder(protocolId: number, body: unknown): void {
    const p = this.writable(protocolId);
    if (!Array.isArray(body)) throw badRequest('$', 'The body must be a JSON array of {stepId, stepOrder}.');
    const errors = new FieldErrors();
    const items: { stepId: number; stepOrder: number }[] = [];
    body.forEach((raw: unknown, i: number) => {
      if (!isObject(raw)) {
        errors.add(`[${i}]`, 'Each item must be an object {stepId, stepOrder}.');
        return;
      }
      const stepId = errors.check(() => requireInt32(raw, 'stepId'));
      const stepOrder = errors.check(() => requireInt32(raw, 'stepOrder'));
      if (stepId === undefined || stepOrder === undefined) return;
      if (items.some((x) => x.stepId === stepId)) errors.add(`[${i}].stepId`, `Step ${stepId} is listed more than once.`);
      else if (!p.steps.some((s) => s.id === stepId))
        errors.add(`[${i}].stepId`, `Step ${stepId} does not belong to protocol ${protocolId}.`);
      if (stepOrder < 1) errors.add(`[${i}].stepOrder`, 'stepOrder must be 1 or greater.');
      items.push({ stepId, stepOrder });
    });
    errors.throwIfAny();
    // Targets first (ascending), so [{a,1},{b,2}] yields a then b whatever their old places.
    const order = sorted(p.steps);
    const moving = [...items].sort((x, y) => x.stepOrder - y.stepOrder);
    const fixed = order.filter((s) => !moving.some((m) => m.stepId === s.id));
    const result: Step[] = [...fixed];
    for (const m of moving) {
      const step = p.steps.find((s) => s.id === m.stepId) as Step;
      result.splice(Math.min(m.stepOrder - 1, result.length), 0, step);
    }
    p.steps = result;
    result.forEach((s, i) => {
      s.stepOrder = i + 1;
    });
  }

  rename(protocolId: number, stepId: number, body: unknown): void {
    const obj = requireObject(body);
    const newName = requireString(obj, 'newName', { nonEmpty: true });
    const step = this.step(protocolId, stepId);
    this.writable(protocolId);
    step.name = newName;
  }

  setDisabled(protocolId: number, stepId: number, body: unknown): void {
    const obj = requireObject(body);
    const disabled = requireBoolean(obj, 'disabled');
    const step = this.step(protocolId, stepId);
    this.writable(protocolId);
    step.disabled = disabled;
  }

  remove(protocolId: number, stepId: number): void {
    const p = this.protocol(protocolId);
    const step = this.step(protocolId, stepId);
    this.writable(protocolId);
    p.steps = p.steps.filter((s) => s !== step);
    renumber(p);
  }
}

function readStepType(obj: JsonObject, lenient: boolean): StepType {
  const v = field(obj, 'stepType');
  const allowed = `Allowed: ${STEP_TYPES.join(', ')}.`;
  if (v === undefined || v === null) throw badRequest('stepType', `The stepType field is required. ${allowed}`);
  if (typeof v !== 'string') throw badRequest('stepType', `The stepType field must be a string. ${allowed}`);
  const wanted = v.toLowerCase();
  // a spec-derived client names types without the suffix (TransferSamples): lenient accepts both spellings
  const match = STEP_TYPES.find((t) => t.toLowerCase() === wanted || (lenient && t.toLowerCase() === `${wanted}step`));
  if (!match) throw badRequest('stepType', `Unknown stepType '${v}'. ${allowed}`);
  return match;
}

/** The variant's own fields that public clients show must have their type (matched in any letter case). */
function checkVariantFields(obj: JsonObject, stepType: StepType, errors: FieldErrors): void {
  const types = STEP_VARIANT_FIELDS[stepType];
  if (!types) return;
  for (const [name, type] of Object.entries(types)) {
    const value = field(obj, name);
    const problem = value === undefined ? undefined : stepFieldProblem(value, type);
    if (problem) errors.add(name, `The ${name} field of a ${stepType} ${problem}.`);
  }
}

function variantFields(obj: JsonObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (!COMMON_FIELDS.some((c) => c.toLowerCase() === k.toLowerCase())) out[k] = v;
  }
  return out;
}

function uniqueName(p: Protocol, name: string, exceptId?: number): string {
  const taken = new Set(p.steps.filter((s) => s.id !== exceptId).map((s) => s.name));
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const candidate = `${name} (${n})`;
    if (!taken.has(candidate)) return candidate;
  }
}

function sorted(steps: Step[]): Step[] {
  return [...steps].sort((a, b) => a.stepOrder - b.stepOrder);
}

function renumber(p: Protocol): void {
  p.steps = sorted(p.steps);
  p.steps.forEach((s, i) => {
    s.stepOrder = i + 1;
  });
}

/** Puts `step` at 1-based position `order` (clamped to the ends) and renumbers. */
function move(p: Protocol, step: Step, order: number): void {
  if (!isInt32(order) || order < 1) throw validationProblem({ stepOrder: ['stepOrder must be 1 or greater.'] });
  const rest = sorted(p.steps).filter((s) => s !== step);
  rest.splice(Math.min(order - 1, rest.length), 0, step);
  p.steps = rest;
  p.steps.forEach((s, i) => {
    s.stepOrder = i + 1;
  });
}

function copy(step: Step): Step {
  return JSON.parse(JSON.stringify(step)) as Step;
}

function summary(s: Step): StepSummary {
  return { stepType: s.stepType, id: s.id, name: s.name, stepOrder: s.stepOrder, disabled: s.disabled };
}

/** A step's custom liquid settings (kept as sent) are served only when includeCustomLiquidSettings=true. */
function withLiquids(step: Step, include: boolean): Step {
  if (!include) delete step[CUSTOM_LIQUIDS];
  return step;
}
const CUSTOM_LIQUIDS = 'customLiquidSettings';
