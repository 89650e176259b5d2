import { type ErrorRecovery, type InstrumentError, type RecoveryKind, validate as v, validationError } from '../../client';
import { describeActions, type OfferedAction, offeredActions } from '../shared/error-records';
import { type NodeMessage } from '../shared/node-red';
import { readInstrumentError } from '../shared/poll-messages';
import { checkInputs, declaredInputs, givenInputs, inputsOfAction } from './action-inputs';

export const KINDS: readonly RecoveryKind[] = ['recovery', 'action'];

export function kindOf(value: unknown, op: string): RecoveryKind {
  return v.oneOf(value, KINDS, 'kind', op);
}

/** The error emitted by lh-error-poll (or anything with a uuid) in msg.payload. */
function errorIn(msg: NodeMessage): InstrumentError | undefined {
  return readInstrumentError(msg.payload);
}

export interface RecoveryInput {
  kind: RecoveryKind;
  uuid: unknown;
  selectedActionId: unknown;
  errorHandlingKey: string | null;
  /** input values that replace msg.inputs (a policy step, the answer page) */
  inputs?: unknown;
  /** take a declared input's default value when none is given (a policy step) */
  useDefaults?: boolean;
  /** the field the input values are named after in errors (default 'inputs') */
  inputsField?: string;
}

/**
 * The action `actionId` among those an error offers (`actions`, as its record lists them), for a submission of
 * `kind`: a recovery solution must be an action the error marks as one (`isRecovery` not false); an action may be
 * any it offers. Throws naming selectedActionId otherwise; undefined when the record lists no actions (the
 * instrument checks).
 */
export function checkOffered(
  kind: RecoveryKind,
  actions: OfferedAction[] | undefined,
  actionId: number,
  uuid: unknown,
  op: string,
): OfferedAction | undefined {
  if (!actions || actions.length === 0) return undefined;
  const action = actions.find((a) => a.id === actionId);
  if (!action) {
    const rule = `must be one of the actions error ${String(uuid)} offers: ${describeActions(actions)}`;
    throw validationError(op, 'selectedActionId', rule, actionId);
  }
  if (kind === 'recovery' && action.isRecovery === false) {
    const recoveries = actions.filter((a) => a.isRecovery !== false);
    const rule = `must be one of the recovery solutions error ${String(uuid)} offers: ${describeActions(recoveries) || 'none'} (${describeActions([action])} is an action: submit it as one)`;
    throw validationError(op, 'selectedActionId', rule, actionId);
  }
  return action;
}

/**
 * The ErrorRecovery body (2.8) from the msg: the error from msg.payload (as lh-error-poll emits it) tells which
 * actions exist; msg.selectedActionIsRecovery, msg.inputs, msg.detailedErrorRecoveries and msg.date complete it.
 * The client validates the whole body (uuid, integers, booleans, dates) before anything is sent.
 */
export function recoveryBody(msg: NodeMessage, input: RecoveryInput, op: string): ErrorRecovery {
  const error = errorIn(msg);
  // a uuid names its error in any letter case (so does the instrument): the error's own spelling is the one kept
  const given = input.uuid ?? error?.uuid;
  const uuid = error && typeof given === 'string' && given.toLowerCase() === error.uuid.toLowerCase() ? error.uuid : given;
  if (uuid === undefined || uuid === null || uuid === '') {
    throw validationError(op, 'uuid', 'is required: wire an error from lh-error-poll (msg.payload.uuid) or set msg.uuid');
  }
  if (input.selectedActionId === undefined || input.selectedActionId === null || input.selectedActionId === '') {
    throw validationError(op, 'selectedActionId', 'is required: set it in the dialog or in msg.selectedActionId');
  }
  const actionId = v.int32(input.selectedActionId, 'selectedActionId', op);
  const actions = error && error.uuid === uuid ? offeredActions(error) : undefined;
  const action = checkOffered(input.kind, actions, actionId, uuid, op);
  const isRecovery =
    msg.selectedActionIsRecovery !== undefined
      ? v.strictBoolean(msg.selectedActionIsRecovery, 'selectedActionIsRecovery', op)
      : (action?.isRecovery ?? input.kind === 'recovery');
  const inputsGiven = input.inputs !== undefined ? input.inputs : msg.inputs;
  const inputsField = input.inputsField ?? 'inputs';
  const inputs = checkInputs(
    {
      declared: actions && actions.length > 0 ? declaredInputs(error, actionId) : undefined,
      given: givenInputs(inputsGiven, inputsField, op),
      actionId,
      useDefaults: input.useDefaults,
      field: inputsField,
    },
    op,
  );
  const detailed = checkDetails(error && error.uuid === uuid ? error : undefined, msg.detailedErrorRecoveries, op);
  return {
    date: msg.date === undefined ? new Date().toISOString() : v.dateTime(msg.date, 'date', op),
    uuid: v.uuid(uuid, 'uuid', op),
    detailedErrorRecoveries: detailed,
    inputs,
    selectedActionId: actionId,
    selectedActionIsRecovery: isRecovery,
    errorHandlingKey: input.errorHandlingKey,
  };
}

/**
 * msg.detailedErrorRecoveries, checked against the error's `details` when the record lists them: each names a detail
 * of the error, an action that detail offers, and the inputs that action requires. Without details in the record the
 * client checks the shape only.
 */
function checkDetails(error: InstrumentError | undefined, value: unknown, op: string): ErrorRecovery['detailedErrorRecoveries'] {
  if (value === undefined || value === null) return null;
  const details = error ? (error as unknown as Record<string, unknown>).details : undefined;
  if (!Array.isArray(details) || !Array.isArray(value)) return value as ErrorRecovery['detailedErrorRecoveries'];
  const known = details.filter(
    (d): d is Record<string, unknown> => !!d && typeof d === 'object' && typeof (d as Record<string, unknown>).uuid === 'string',
  );
  return value.map((raw: unknown, i) => {
    const f = `detailedErrorRecoveries[${i}]`;
    const o = v.plainObject(raw, f, op);
    const detail = known.find((d) => typeof o.uuid === 'string' && String(d.uuid).toLowerCase() === o.uuid.toLowerCase());
    if (!detail) {
      const list = known.map((d) => String(d.uuid)).join(', ') || 'none';
      throw validationError(op, `${f}.uuid`, `must be a detail of error ${String(error?.uuid)} (details: ${list})`, o.uuid);
    }
    const actionId = v.int32(o.selectedActionId, `${f}.selectedActionId`, op);
    const actions = offeredActions(detail) ?? [];
    const action = actions.find((a) => a.id === actionId);
    if (actions.length > 0 && !action) {
      throw validationError(
        op,
        `${f}.selectedActionId`,
        `must be one of the actions detail ${String(detail.uuid)} offers: ${describeActions(actions)}`,
        actionId,
      );
    }
    const rawAction = Array.isArray(detail.actions)
      ? (detail.actions as unknown[]).find(
          (a): a is Record<string, unknown> => !!a && typeof a === 'object' && (a as Record<string, unknown>).id === actionId,
        )
      : undefined;
    const inputs = checkInputs(
      {
        declared: actions.length > 0 ? inputsOfAction(rawAction) : undefined,
        given: givenInputs(o.inputs, `${f}.inputs`, op),
        actionId,
        field: `${f}.inputs`,
      },
      op,
    );
    return {
      date: o.date === undefined ? new Date().toISOString() : v.dateTime(o.date, `${f}.date`, op),
      uuid: v.uuid(o.uuid, `${f}.uuid`, op),
      inputs: inputs ?? [],
      selectedActionId: actionId,
      selectedActionIsRecovery:
        o.selectedActionIsRecovery === undefined
          ? (action?.isRecovery ?? true)
          : v.strictBoolean(o.selectedActionIsRecovery, `${f}.selectedActionIsRecovery`, op),
    };
  });
}
