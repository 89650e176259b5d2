/**
 * A plan as `plan` emits it and `apply` takes it back (`msg.plan`): checked field by field before anything is sent,
 * since it travels through a flow (and a person's approval) between the two. Pure.
 */
import { validate as v, validationError } from '../../client';
import { canonicalStep, documentObject, type ExportStep, MAX_NAME_LENGTH, MAX_STEPS, readDesired } from './export-format';
import { type Change, CHANGE_ACTIONS, type ChangeAction, describeChange } from './plan-make';

export interface Plan {
  /** this change set's id: every write of its apply carries it in the audit trail */
  id: string;
  protocolId: number;
  protocolName: string;
  /** the instrument the plan was made on (the lh-server's interface A URL) */
  instrument: string;
  /** digest of the protocol's export as it was read when planning */
  base: string;
  /** digest of the export the changes lead to */
  target: string;
  changes: Change[];
  /** one line per change (describeChange), for a notification; apply does not read it */
  summary: string[];
}

/**
 * The most changes a plan can have: four per kept step (rename, update, enable or disable, move) and one per created
 * step, for at most MAX_STEPS desired steps, and the deletes of a protocol of up to MAX_STEPS more.
 */
export const MAX_CHANGES = 5 * MAX_STEPS;
/** A name the instrument's protocol has (a delete's, a rename's `from`): as long as a name the client writes. */
const MAX_CURRENT_NAME_LENGTH = 1000;

/** The longest instrument URL a plan may name (the lh-server's URL; longer is not one). */
const MAX_URL_LENGTH = 2048;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const PLAN_ID = /^[A-Za-z0-9._:-]{1,100}$/;

export function makePlan(fields: Omit<Plan, 'summary'>): Plan {
  return { ...fields, summary: fields.changes.map(describeChange) };
}

function text(value: unknown, field: string, operation: string, max = MAX_NAME_LENGTH): string {
  if (typeof value !== 'string' || value === '' || value.length > max) {
    throw validationError(operation, field, `must be a non-empty text of at most ${max} characters`, value);
  }
  return value;
}

function stepOrder(value: unknown, field: string, operation: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_STEPS + 1) {
    throw validationError(operation, field, `must be a whole number from 1 to ${MAX_STEPS + 1}`, value);
  }
  return value;
}

/** A create's or update's step, checked as a desired step is; its name must be the change's. */
function changeStep(value: unknown, name: string, field: string, operation: string): ExportStep {
  const raw = v.plainObject(value, field, operation);
  if (raw.renamedFrom !== undefined)
    throw validationError(operation, `${field}.renamedFrom`, 'has no place in a plan (the plan renames)');
  const [step] = readDesired({ steps: [raw] }, operation).map((s) => canonicalStep(s.name, s.stepType, s.disabled, ownOf(s)));
  if (step.name !== name) throw validationError(operation, `${field}.name`, `must be the change's name "${name}"`, step.name);
  return step;
}

function ownOf(step: ExportStep): Record<string, unknown> {
  const { name: _n, stepType: _t, disabled: _d, renamedFrom: _r, ...own } = step;
  return own;
}

function readChange(raw: unknown, i: number, operation: string): Change {
  const at = `plan.changes[${i}]`;
  const c = v.plainObject(raw, at, operation);
  const action = c.action;
  if (typeof action !== 'string' || !(CHANGE_ACTIONS as readonly string[]).includes(action)) {
    throw validationError(operation, `${at}.action`, `must be one of ${CHANGE_ACTIONS.join(', ')}`, action);
  }
  // a delete names a step as the instrument has it; every other change a step as the desired protocol names it
  const name = text(c.name, `${at}.name`, operation, action === 'delete' ? MAX_CURRENT_NAME_LENGTH : MAX_NAME_LENGTH);
  switch (action as ChangeAction) {
    case 'delete':
    case 'enable':
    case 'disable':
      return { action: action as 'delete' | 'enable' | 'disable', name };
    case 'rename':
      return { action: 'rename', name, from: text(c.from, `${at}.from`, operation, MAX_CURRENT_NAME_LENGTH) };
    case 'move':
      return { action: 'move', name, stepOrder: stepOrder(c.stepOrder, `${at}.stepOrder`, operation) };
    case 'create':
      return {
        action: 'create',
        name,
        stepOrder: stepOrder(c.stepOrder, `${at}.stepOrder`, operation),
        step: changeStep(c.step, name, `${at}.step`, operation),
      };
    case 'update': {
      // apply checks them against the fields its step changes (they show in msg.applied and the audit trail)
      if (!Array.isArray(c.fields) || !c.fields.every((f) => typeof f === 'string'))
        throw validationError(operation, `${at}.fields`, 'must be the list of field names plan gave', c.fields);
      const fields = [...(c.fields as string[])];
      return { action: 'update', name, fields, step: changeStep(c.step, name, `${at}.step`, operation) };
    }
  }
}

/**
 * The plan's instrument: the lh-server's URL as plan wrote it, so an http(s) URL without a user name, password, query
 * or fragment (as the lh-server's URL is checked), nor a space, control or format character inside, of bounded length.
 * Never echoed when it is not one: a plan edited by hand may hold a password there (or a line break, to forge a log
 * line), and the refusal goes to msg.error and the log.
 */
function instrumentUrl(value: unknown, operation: string): string {
  const refused = (): never => {
    throw validationError(
      operation,
      'plan.instrument',
      `must be the instrument URL plan gave: http:// or https://, no user name, password, query, fragment, space or control character, at most ${MAX_URL_LENGTH} characters`,
    );
  };
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH || /[?#]/.test(value)) return refused();
  const text = value.trim();
  if (!/^https?:\/\/[^/\s]+/i.test(text)) return refused();
  // the URL parser drops line breaks and tabs and takes controls and bidi overrides: shown, they would forge the log
  if (/[\s\p{Cc}\p{Cf}]/u.test(text)) return refused();
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    return refused();
  }
  if (url.username !== '' || url.password !== '') return refused();
  return value;
}

/** msg.plan, checked: every field of the plan and of each change, named when wrong. */
export function readPlan(value: unknown, operation: string): Plan {
  const p = documentObject(value, 'plan', 'the plan as plan gave it', operation);
  if (typeof p.id !== 'string' || !PLAN_ID.test(p.id))
    throw validationError(operation, 'plan.id', 'must be the id plan gave (1 to 100 letters, digits or . _ : -)', p.id);
  const protocolId = v.databaseId(p.protocolId, 'plan.protocolId', operation);
  const instrument = instrumentUrl(p.instrument, operation);
  for (const field of ['base', 'target'] as const) {
    if (typeof p[field] !== 'string' || !DIGEST.test(p[field] as string)) {
      throw validationError(operation, `plan.${field}`, 'must be a digest as plan gives it (sha256:<64 hex digits>)', p[field]);
    }
  }
  if (!Array.isArray(p.changes) || p.changes.length > MAX_CHANGES) {
    throw validationError(operation, 'plan.changes', `must be an array of at most ${MAX_CHANGES} changes`, p.changes);
  }
  const changes = p.changes.map((c, i) => readChange(c, i, operation));
  return {
    id: p.id,
    protocolId,
    protocolName: typeof p.protocolName === 'string' ? p.protocolName : '',
    instrument,
    base: p.base as string,
    target: p.target as string,
    changes,
    summary: changes.map(describeChange),
  };
}
