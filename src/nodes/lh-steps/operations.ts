import { asLhError, LhError, type PrepApi, type Step, validate as v, validationError } from '../../client';
import { listAllSteps } from './pages';

export const STEP_OPERATIONS = ['create', 'update', 'list', 'get', 'reorder', 'rename', 'enable', 'disable', 'delete'] as const;
export type StepOperation = (typeof STEP_OPERATIONS)[number];

/** What an lh-steps node asks for, once its settings are resolved against the msg. Values are checked by the client. */
export interface StepRequest {
  operation: StepOperation;
  protocolId: unknown;
  stepId?: unknown;
  payload?: unknown;
  makeNameUnique?: boolean;
  offset?: number;
  limit?: number;
  includeFullStepData?: boolean;
  includeCustomLiquidSettings?: boolean;
  allPages?: boolean;
}

export interface StepResult {
  payload: unknown;
  /** key of common.status.* and its substitutions */
  status: { key: string; subs?: Record<string, unknown> };
}

export function stepOperation(value: unknown): StepOperation {
  return v.oneOf(value, STEP_OPERATIONS, 'operation', 'lh-steps');
}

/** rename takes the new name as a text or as `{newName}`. */
export function newNameOf(payload: unknown): unknown {
  if (typeof payload === 'string') return payload;
  if (v.isPlainObject(payload)) return payload.newName;
  throw validationError('rename-step', 'payload', 'must be the new name as a text or an object {newName}', payload);
}

/** Runs one step operation; operations the instrument answers without a body read the result back. */
export async function runStepOperation(prep: PrepApi, r: StepRequest): Promise<StepResult> {
  const saved = { key: 'saved' };
  switch (r.operation) {
    case 'create':
      return { payload: await prep.createStep(r.protocolId, r.payload, r.makeNameUnique), status: saved };
    case 'update': {
      const answer = await prep.updateStep(r.protocolId, r.payload, r.makeNameUnique);
      if (isStep(answer)) return { payload: answer, status: saved };
      const id = (r.payload as { id: unknown }).id;
      const step = await madeThen('update-step', 'update', 'step', () =>
        prep.getStep(r.protocolId, id, r.includeCustomLiquidSettings),
      );
      return { payload: step, status: saved };
    }
    case 'list': {
      const query = {
        offset: r.offset,
        limit: r.limit,
        includeFullStepData: r.includeFullStepData,
        includeCustomLiquidSettings: r.includeCustomLiquidSettings,
      };
      const steps = r.allPages ? await listAllSteps(prep, r.protocolId, query) : await prep.listSteps(r.protocolId, query);
      return { payload: steps, status: { key: 'count', subs: { count: Array.isArray(steps) ? steps.length : 0 } } };
    }
    case 'get':
      return { payload: await prep.getStep(r.protocolId, r.stepId, r.includeCustomLiquidSettings), status: { key: 'done' } };
    case 'reorder': {
      await prep.reorderSteps(r.protocolId, r.payload);
      const steps = await madeThen('reorder-steps', 'reorder', 'steps', () =>
        listAllSteps(prep, r.protocolId, { includeFullStepData: r.includeFullStepData }),
      );
      return { payload: steps, status: saved };
    }
    case 'rename':
      await prep.renameStep(r.protocolId, r.stepId, newNameOf(r.payload));
      return readBack(prep, r, 'rename-step');
    case 'enable':
    case 'disable':
      await prep.setStepDisabled(r.protocolId, r.stepId, r.operation === 'disable');
      return readBack(prep, r, `${r.operation}-step`);
    case 'delete':
      await prep.deleteStep(r.protocolId, r.stepId);
      return {
        payload: {
          protocolId: v.databaseId(r.protocolId, 'protocolId', 'delete-step'),
          stepId: v.databaseId(r.stepId, 'stepId', 'delete-step'),
          deleted: true,
        },
        status: { key: 'done' },
      };
  }
}

async function readBack(prep: PrepApi, r: StepRequest, op: string): Promise<StepResult> {
  const step = await madeThen(op, r.operation, 'step', () => prep.getStep(r.protocolId, r.stepId, r.includeCustomLiquidSettings));
  return { payload: step, status: { key: 'saved' } };
}

/**
 * The read back after a write that was made: its failure says the write was made (under the write's operation), so
 * the msg at Catch is not taken for a write that failed.
 */
async function madeThen<T>(op: string, what: string, read: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const cause = asLhError(err, op);
    throw new LhError(`${op}: the ${what} was made, but reading the ${read} back failed: ${cause.message}`, {
      kind: cause.kind,
      operation: op,
      statusCode: cause.statusCode,
      body: cause.body,
    });
  }
}

function isStep(value: unknown): value is Step {
  return v.isPlainObject(value) && Object.keys(value).length > 0;
}
